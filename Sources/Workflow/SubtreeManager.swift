/// Owns what a node's render pass declares: child nodes and side effects; and numbers its sinks.
///
/// Each pass starts with everything "unclaimed"; whatever the pass does not declare again is torn
/// down when it ends. That single rule gives children, side effects and workers their automatic
/// lifecycle. Sinks are not part of it: each sink carries its own handler (`SinkHandler`), valid
/// for as long as the node lives.
final class SubtreeManager<W: Workflow> {
    private var children: [ChildKey: any AnyChildNode] = [:]
    private var childOrder: [ChildKey] = []
    private var previousChildren: [ChildKey: any AnyChildNode] = [:]
    private var sideEffects: [AnyHashable: Lifetime] = [:]
    private var previousSideEffects: [AnyHashable: Lifetime] = [:]
    /// How many sinks this pass made so far: each sink's slot, for its export token.
    private var sinkCount = 0
    private var pendingChildSnapshots: [TreeSnapshot.Child]

    init(childSnapshots: [TreeSnapshot.Child]) {
        pendingChildSnapshots = childSnapshots
    }

    func beginPass() {
        // The two tables trade places instead of being rebuilt: each keeps its capacity, so a
        // re-render of N children does not regrow a table to N on every pass.
        swap(&previousChildren, &children)
        childOrder.removeAll(keepingCapacity: true)
        swap(&previousSideEffects, &sideEffects)
        sinkCount = 0
    }

    func endPass() {
        for (_, child) in previousChildren { child.tearDown() }
        previousChildren.removeAll(keepingCapacity: true)
        for (_, lifetime) in previousSideEffects { lifetime.end() }
        previousSideEffects.removeAll(keepingCapacity: true)
        // Snapshots only apply to children rendered on the first pass after a restore.
        pendingChildSnapshots = []
    }

    func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<W>,
        parent: WorkflowNode<W>
    ) -> Child.Rendering {
        let childKey = ChildKey(type: ObjectIdentifier(Child.self), key: key)
        if children[childKey] != nil {
            preconditionFailure(
                "\(W.self) rendered a child of type \(Child.self) with key \"\(key)\" more than once in one render pass. "
                    + "Give each child of the same type a unique key.")
        }
        let child: ChildNode<Child, W>
        if let existing = previousChildren.removeValue(forKey: childKey) {
            // The key holds `Child`'s identity and this manager's parent is always `W`, so the
            // node is a `ChildNode<Child, W>`; a checked cast would look the type up every pass.
            child = unsafeDowncast(existing, to: ChildNode<Child, W>.self)
            child.outputMap = outputMap
            child.node.update(workflow: workflow)
        } else {
            var snapshot: TreeSnapshot?
            if !pendingChildSnapshots.isEmpty {
                let name = stableIdentity(of: Child.self).name
                snapshot = pendingChildSnapshots.first { $0.key == key && $0.snapshot.workflowType == name }?.snapshot
            }
            child = ChildNode(
                node: WorkflowNode(workflow: workflow, key: key, parentPath: { [unowned parent] in parent.path }, host: parent.host, snapshot: snapshot),
                outputMap: outputMap, parent: parent)
        }
        children[childKey] = child
        childOrder.append(childKey)
        return child.node.render()
    }

    func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action,
        node: WorkflowNode<W>
    ) -> Sink<Event> where Action.WorkflowType == W {
        let host = node.host
        let handler = TypedSinkHandler(
            node: node.id, mailbox: host.mailbox, incarnation: host.incarnation, pass: host.renderPass, slot: sinkCount,
            onEvent: onEvent)
        sinkCount += 1
        return Sink(handler: handler)
    }

    func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        if sideEffects[key] != nil {
            preconditionFailure("\(W.self) declared the side effect \(key) more than once in one render pass.")
        }
        if let existing = previousSideEffects.removeValue(forKey: key) {
            sideEffects[key] = existing
        } else {
            let lifetime = Lifetime()
            sideEffects[key] = lifetime
            action(lifetime)
        }
    }

    func tearDown() {
        for key in childOrder { children[key]?.tearDown() }
        children = [:]
        childOrder = []
        for (_, lifetime) in sideEffects { lifetime.end() }
        sideEffects = [:]
    }

    func childSnapshots() -> [TreeSnapshot.Child] {
        childOrder.compactMap { key in children[key].map { TreeSnapshot.Child(key: key.key, snapshot: $0.snapshot()) } }
    }

    func describeChildren(into lines: inout [String], depth: Int) {
        for key in childOrder { children[key]?.describe(into: &lines, depth: depth) }
    }
}

/// A child's identity within its parent: concrete workflow type plus key.
struct ChildKey: Hashable {
    let type: ObjectIdentifier
    let key: String
}

protocol AnyChildNode: AnyObject {
    func tearDown()
    func snapshot() -> TreeSnapshot
    func describe(into lines: inout [String], depth: Int)
}

/// A child node plus the parent's latest output map for it.
final class ChildNode<Child: Workflow, Parent: Workflow>: AnyChildNode {
    let node: WorkflowNode<Child>
    var outputMap: (Child.Output) -> AnyWorkflowAction<Parent>

    init(node: WorkflowNode<Child>, outputMap: @escaping (Child.Output) -> AnyWorkflowAction<Parent>, parent: WorkflowNode<Parent>) {
        self.node = node
        self.outputMap = outputMap
        node.onOutput = { [unowned self, unowned parent] output in
            parent.apply(self.outputMap(output))
        }
    }

    func tearDown() { node.tearDown() }
    func snapshot() -> TreeSnapshot { node.snapshot() }
    func describe(into lines: inout [String], depth: Int) { node.describe(into: &lines, depth: depth) }
}
