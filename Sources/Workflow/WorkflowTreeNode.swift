/// One node of a live workflow tree, as `WorkflowHost.liveTree()` lists it.
///
/// Tools that show a running tree (an inspector page, a debugger, a status command) need each
/// node's identity without reaching into the runtime's private node types; the list is a
/// pre-order walk, so a node's children follow it with `depth + 1`.
public struct WorkflowTreeNode: Sendable, Equatable {
    /// The node's path from the root in stable type names and keys, e.g. `/Root/Child[key]` —
    /// the same path runtimes layered on the host use for the node (remote children, logs).
    public var path: String
    /// The workflow's stable type name (see `Workflow.workflowTypeName`).
    public var workflowType: String
    /// The key its parent rendered it with (empty for the root and unkeyed children).
    public var key: String
    /// 0 for the root, 1 for its children, and so on.
    public var depth: Int

    public init(path: String, workflowType: String, key: String, depth: Int) {
        self.path = path
        self.workflowType = workflowType
        self.key = key
        self.depth = depth
    }
}
