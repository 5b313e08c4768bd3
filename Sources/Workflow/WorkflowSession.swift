/// The identity of one live workflow node, as workflow-swift's `WorkflowObserver` sees it: its
/// workflow type, the key it was rendered with, an identifier unique in the process, and the
/// session of its parent (`nil` for a host's root).
///
/// A session begins when a parent first renders a (type, key) pair and ends when a pass no
/// longer renders it (or the host stops), exactly a node's life. Not `Sendable`, like
/// workflow-swift's (its workflow type is a plain metatype); its `sessionID` is.
public struct WorkflowSession {
    /// Tells sessions apart: no two nodes of any hosts in one process share one.
    public struct Identifier: Hashable, Sendable {
        /// The node's host (a random number per host).
        let host: UInt64
        /// The node, within its host.
        let node: UInt64
    }

    /// The workflow type of the node.
    public let workflowType: Any.Type
    /// The key the node's parent rendered it with (empty for the root and unkeyed children).
    public let renderKey: String
    /// The node's identifier.
    public let sessionID: Identifier
    /// The parent node's session, or `nil` for the root.
    public var parent: WorkflowSession? { parentBox?.session }

    /// A class box, since a struct cannot store a value of its own type.
    private let parentBox: ParentBox?

    init(workflowType: any Workflow.Type, renderKey: String, sessionID: Identifier, parent: WorkflowSession?) {
        self.workflowType = workflowType
        self.renderKey = renderKey
        self.sessionID = sessionID
        self.parentBox = parent.map(ParentBox.init)
    }

    private final class ParentBox {
        let session: WorkflowSession
        init(_ session: WorkflowSession) { self.session = session }
    }
}
