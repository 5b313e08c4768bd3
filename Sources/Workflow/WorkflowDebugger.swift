import Synchronization

/// Receives the whole tree after every render pass: workflow-swift's `WorkflowDebugger`, for
/// tools that show a tree's states and why it changed.
///
/// Pass one as `WorkflowHost(workflow:observers:debugger:)`. It is built on the host's
/// ``WorkflowObserver`` callbacks, so it costs nothing when not given and runs on the host's loop
/// like any observer (keep it cheap; hand the snapshot elsewhere to inspect it).
public protocol WorkflowDebugger: Sendable {
    /// The tree after the host's first render pass.
    func didEnterInitialState(snapshot: WorkflowHierarchyDebugSnapshot)
    /// The tree after a later render pass, and what led to it.
    func didUpdate(snapshot: WorkflowHierarchyDebugSnapshot, updateInfo: WorkflowUpdateDebugInfo)
}

/// One workflow of the tree and its subtree, as a debugger sees it: type names, state
/// descriptions (`String(describing:)`) and child keys.
public struct WorkflowHierarchyDebugSnapshot: Codable, Equatable, Sendable {
    /// The workflow's type name.
    public var workflowType: String
    /// The workflow's state, described.
    public var stateDescription: String
    /// The live children, in the order they were first rendered.
    public var children: [Child]

    /// A child and the key its parent rendered it with.
    public struct Child: Codable, Equatable, Sendable {
        public var key: String
        public var snapshot: WorkflowHierarchyDebugSnapshot
    }
}

/// Why a render pass happened, from the root's point of view: the root itself changed, or a
/// child did (recursively), and what changed the workflow where it began.
public struct WorkflowUpdateDebugInfo: Codable, Equatable, Sendable {
    /// The type name of the workflow this describes.
    public var workflowType: String
    /// Whether this workflow was updated itself or through a child.
    public var kind: Kind

    /// How the workflow took part in the update.
    public indirect enum Kind: Codable, Equatable, Sendable {
        /// The workflow applied an action, from `source`.
        case didUpdate(source: Source)
        /// A child (described by the associated info) was updated and the workflow rendered it.
        case childDidUpdate(WorkflowUpdateDebugInfo)
    }

    /// Where the action a workflow applied came from.
    public indirect enum Source: Codable, Equatable, Sendable {
        /// A sink event, new props for the root, or anything else from outside the tree.
        case external
        /// A worker's output.
        case worker
        /// A side effect.
        case sideEffect
        /// An output of the child the associated info describes.
        case subtree(WorkflowUpdateDebugInfo)
    }
}

extension WorkflowHost {
    /// Starts `workflow` with a `debugger` besides `observers`: workflow-swift's initializer.
    public convenience init(
        workflow: WorkflowType,
        observers: [any WorkflowObserver] = [],
        debugger: (any WorkflowDebugger)?
    ) {
        self.init(workflow: workflow, observers: observers + (debugger.map { [DebuggerObserver(debugger: $0)] } ?? []))
    }
}

/// Feeds a `WorkflowDebugger` from the observer callbacks: keeps a mirror of the tree (types,
/// keys, state descriptions) and the chain of actions since the last pass, and reports both when
/// the root finishes rendering.
///
/// Its callbacks all run on the host's loop; the `Mutex` only satisfies `Sendable` (and costs
/// an uncontended lock per callback, paid only by hosts with a debugger).
final class DebuggerObserver: WorkflowObserver {
    private let debugger: any WorkflowDebugger
    private let tree = Mutex(Tree())

    init(debugger: any WorkflowDebugger) {
        self.debugger = debugger
    }

    /// The mirror of the host's nodes.
    struct Tree {
        struct Node {
            var workflowType: String
            var key: String
            var stateDescription: String
            var parent: WorkflowSession.Identifier?
            var children: [WorkflowSession.Identifier] = []
        }

        var nodes: [WorkflowSession.Identifier: Node] = [:]
        /// The actions applied since the last pass, outermost last: where the update began.
        var updated: (node: WorkflowSession.Identifier, info: WorkflowUpdateDebugInfo)?
        var hasRendered = false

        func snapshot(of id: WorkflowSession.Identifier) -> WorkflowHierarchyDebugSnapshot {
            let node = nodes[id]
            return WorkflowHierarchyDebugSnapshot(
                workflowType: node?.workflowType ?? "?", stateDescription: node?.stateDescription ?? "",
                children: (node?.children ?? []).map { .init(key: nodes[$0]?.key ?? "", snapshot: snapshot(of: $0)) })
        }

        /// The root's view of the update: the info of the node where the actions ended, wrapped
        /// in `childDidUpdate` for each ancestor up to the root.
        func rootInfo(root: WorkflowSession.Identifier) -> WorkflowUpdateDebugInfo {
            guard let updated else {
                return WorkflowUpdateDebugInfo(workflowType: nodes[root]?.workflowType ?? "?", kind: .didUpdate(source: .external))
            }
            var (id, info) = updated
            while id != root, let parent = nodes[id]?.parent {
                info = WorkflowUpdateDebugInfo(workflowType: nodes[parent]?.workflowType ?? "?", kind: .childDidUpdate(info))
                id = parent
            }
            return info
        }
    }

    func sessionDidBegin(_ session: WorkflowSession) {
        let parent = session.parent?.sessionID
        tree.withLock { tree in
            tree.nodes[session.sessionID] = Tree.Node(
                workflowType: "\(session.workflowType)", key: session.renderKey, stateDescription: "", parent: parent)
            if let parent { tree.nodes[parent]?.children.append(session.sessionID) }
        }
    }

    func sessionDidEnd(_ session: WorkflowSession) {
        tree.withLock { tree in
            if let parent = tree.nodes.removeValue(forKey: session.sessionID)?.parent {
                tree.nodes[parent]?.children.removeAll { $0 == session.sessionID }
            }
        }
    }

    func workflowDidMakeInitialState<W: Workflow>(_ workflow: W, initialState: W.State, session: WorkflowSession) {
        let description = String(describing: initialState)
        tree.withLock { $0.nodes[session.sessionID]?.stateDescription = description }
    }

    func workflowWillRender<W: Workflow>(_ workflow: W, state: W.State, session: WorkflowSession) -> ((W.Rendering) -> Void)? {
        let description = String(describing: state)
        tree.withLock { $0.nodes[session.sessionID]?.stateDescription = description }
        guard session.parent == nil else { return nil }
        let root = session.sessionID
        return { [self] _ in reportPass(root: root) }
    }

    func workflowDidReceiveAction<Action: WorkflowAction>(_ action: Action, workflow: Action.WorkflowType, session: WorkflowSession) {
        let id = session.sessionID
        let type = "\(session.workflowType)"
        tree.withLock { tree in
            // An action at the parent of the node that last applied one is that child's output.
            let source: WorkflowUpdateDebugInfo.Source
            if let updated = tree.updated, tree.nodes[updated.node]?.parent == id {
                source = .subtree(updated.info)
            } else {
                source = .external
            }
            tree.updated = (id, WorkflowUpdateDebugInfo(workflowType: type, kind: .didUpdate(source: source)))
        }
    }

    /// Hands the debugger the tree after the root's pass, and what led to it.
    private func reportPass(root: WorkflowSession.Identifier) {
        let (snapshot, info, first) = tree.withLock { tree in
            let report = (tree.snapshot(of: root), tree.rootInfo(root: root), !tree.hasRendered)
            tree.hasRendered = true
            tree.updated = nil
            return report
        }
        if first {
            debugger.didEnterInitialState(snapshot: snapshot)
        } else {
            debugger.didUpdate(snapshot: snapshot, updateInfo: info)
        }
    }
}
