/// The runtime's record of one live workflow: its latest props, its state, and its subtree.
///
/// Nodes are created the first time a parent renders a (type, key) pair and live until a render
/// pass of the parent no longer renders that pair. They are confined to the host's loop.
final class WorkflowNode<W: Workflow>: AnyWorkflowNode {
    private(set) var workflow: W
    private(set) var state: W.State
    let host: HostContext
    let key: String
    /// The parent's path, computed on demand: building every node's full path eagerly costs
    /// O(depth) per node, which made the first render of a deep chain quadratic.
    private let parentPath: () -> String
    private var cachedPath: String?
    private(set) var id: UInt64 = 0
    private let subtree: SubtreeManager<W>
    /// Where this node's outputs go: the parent's output map, or the host for the root.
    var onOutput: (W.Output) -> Void = { _ in }

    init(workflow: W, key: String, parentPath: @escaping () -> String, host: HostContext, snapshot: TreeSnapshot?) {
        self.workflow = workflow
        self.key = key
        self.host = host
        self.parentPath = parentPath
        var restored: W.State?
        var rejection: String?
        // A node whose state is not Codable (stateless workflows, workers) saved no state: there
        // is nothing to restore, so starting fresh is expected, not a rejected snapshot.
        if let snapshot, snapshot.state != nil || W.State.self is any Decodable.Type {
            do {
                restored = try StateCoding.decode(snapshot, for: W.self)
            } catch {
                rejection = error.description
            }
        }
        state = restored ?? workflow.makeInitialState()
        subtree = SubtreeManager(childSnapshots: snapshot?.children ?? [])
        id = host.register(self)
        if let rejection { host.observers?.forEach { $0.snapshotWasRejected(path: path, reason: rejection) } }
    }

    /// The node's path from the root: stable type names and keys, e.g. `/Root/Child[key]`.
    var path: String {
        if let cachedPath { return cachedPath }
        let name = stableIdentity(of: W.self).name
        let path = parentPath() + "/" + (key.isEmpty ? name : "\(name)[\(key)]")
        cachedPath = path
        return path
    }

    /// Renders the node and, through it, its subtree.
    func render() -> W.Rendering {
        let context = NodeRenderContext(node: self, subtree: subtree)
        subtree.beginPass()
        let rendering = workflow.render(state: state, context: context)
        context.invalidate()
        subtree.endPass()
        host.observers?.forEach { $0.workflowDidRender(path: path) }
        return rendering
    }

    /// Takes new props from the parent's render pass.
    func update(workflow newWorkflow: W) {
        let previous = workflow
        workflow = newWorkflow
        newWorkflow.workflowDidChange(from: previous, state: &state)
    }

    /// Applies `action`, then forwards any output up the tree (the cascade runs synchronously).
    func apply<A: WorkflowAction>(_ action: A) where A.WorkflowType == W {
        let context = ApplyContext(workflow: workflow)
        let output: W.Output?
        if host.options.renderOnlyIfStateChanged, W.State.self == Void.self {
            // A `Void` state cannot change (workflow-swift treats it as unchanged).
            output = action.apply(toState: &state, context: context)
        } else if host.options.renderOnlyIfStateChanged, let before = state as? any Equatable {
            output = action.apply(toState: &state, context: context)
            if !isEqual(before, state) { host.needsRender = true }
        } else {
            output = action.apply(toState: &state, context: context)
            host.needsRender = true
        }
        context.invalidate()
        if let observers = host.observers {
            let name = (action as? AnyWorkflowAction<W>).map { String(describing: $0.actionType) } ?? String(describing: A.self)
            observers.forEach { $0.actionWasApplied(action: name, path: path, producedOutput: output != nil || !context.emittedOutputs.isEmpty) }
        }
        for emitted in context.emittedOutputs { onOutput(emitted) }
        if let output { onOutput(output) }
    }

    /// Applies the action the sink's own handler makes for `value`, whichever pass made it.
    func handleEvent(handler: AnySinkHandler, value: any Sendable) {
        // The registry found this node by the handler's node id, and only this node makes
        // handlers with that id: they are `SinkHandler<W>`s. A checked cast would look the
        // generic type up on every event.
        let handler = unsafeDowncast(handler, to: SinkHandler<W>.self)
        guard let action = handler.action(for: value) else { return }
        apply(action)
    }

    /// Ends the subtree's side effects and workers and makes the node's sinks no-ops.
    func tearDown() {
        subtree.tearDown()
        host.unregister(id)
    }

    /// The node's snapshot, including every live child's.
    func snapshot() -> TreeSnapshot {
        let identity = stableIdentity(of: W.self)
        return TreeSnapshot(
            workflowType: identity.name, stateVersion: identity.version,
            state: StateCoding.encode(state), children: subtree.childSnapshots())
    }

    func describe(into lines: inout [String], depth: Int) {
        let indent = String(repeating: "  ", count: depth)
        let keyText = key.isEmpty ? "" : " key=\"\(key)\""
        lines.append("\(indent)\(stableIdentity(of: W.self).name)\(keyText)")
        subtree.describeChildren(into: &lines, depth: depth + 1)
    }
}

private func isEqual(_ lhs: any Equatable, _ rhs: Any) -> Bool {
    func open<T: Equatable>(_ lhs: T) -> Bool {
        guard let rhs = rhs as? T else { return false }
        return lhs == rhs
    }
    return open(lhs)
}
