/// Owns what a node's render pass declares: child nodes and side effects.
///
/// Each pass starts with everything "unclaimed"; whatever the pass does not declare again is torn
/// down when it ends. That single rule gives children, side effects and workers their automatic
/// lifecycle. Sinks are not part of it: each sink carries its own handler (`SinkHandler`), valid
/// for as long as the node lives.
///
/// Children are matched by position first: a pass that renders the same children in the same
/// order as the last one (the common case) claims each by comparing its type and key with the
/// entry at the same place, with no hashing. Only a child out of place falls back to a table by
/// (type, key), built on demand; only a child new in this pass is hashed to catch duplicates.
///
/// The bookkeeping itself is `SubtreeLedger`, a value this class holds and changes with one
/// mutating call per operation; this class adds what needs `W` (making child nodes, messages)
/// and runs what may re-enter (a child's teardown, a side effect's action) outside that call.
final class SubtreeManager<W: Workflow> {
    /// Every piece of the manager's mutable state, in one stored property: each operation is one
    /// exclusivity-checked access to it instead of one per property it touches (each dynamic
    /// check costs some 200 instructions, and a pass made about ten of them).
    private var ledger = SubtreeLedger()

    func beginPass() {
        ledger.beginPass()
    }

    func endPass() {
        // What the pass did not declare again is ended outside the ledger's access: a child's
        // teardown and a lifetime's handlers run code that must not overlap it.
        guard var leftovers = ledger.endPass() else { return }
        for entry in leftovers.children where !entry.claimed { entry.node.tearDown() }
        for (_, lifetime) in leftovers.sideEffects { lifetime.end() }
        ledger.recycle(&leftovers)
    }

    func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<W>,
        passOutput: ((Child.Output) -> Void)? = nil,
        parent: WorkflowNode<W>
    ) -> Child.Rendering {
        let type = ObjectIdentifier(Child.self)
        let child: ChildNode<Child, W>
        switch ledger.claim(type: type, key: key) {
        case .previous(let node):
            // The entry moved over as it is (its existential is not rebuilt, which would look the
            // node's conformance up again). It holds `Child`'s identity and this manager's parent
            // is always `W`, so the node is a `ChildNode<Child, W>`; a checked cast would look
            // the type up every pass.
            child = unsafeDowncast(node, to: ChildNode<Child, W>.self)
            child.outputMap = outputMap
            child.passOutput = passOutput
            child.update(workflow: workflow)
        case .new:
            child = ChildNode(
                workflow: workflow, key: key, parent: parent, snapshot: parent.pendingSnapshot(of: Child.self, key: key),
                outputMap: outputMap)
            child.passOutput = passOutput
            ledger.append(ChildEntry(type: type, key: key, node: child))
        case .duplicate(let previous):
            duplicate(key: key, typeName: previous?.workflowTypeDescription ?? "\(Child.self)")
        }
        return child.render()
    }

    private func duplicate(key: String, typeName: String) -> Never {
        preconditionFailure(
            "\(W.self) rendered a child of type \(typeName) with key \"\(key)\" more than once in one render pass. "
                + "Give each child of the same type a unique key.")
    }

    func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        guard let (lifetime, isNew) = ledger.declareSideEffect(key: key) else {
            preconditionFailure("\(W.self) declared the side effect \(key) more than once in one render pass.")
        }
        // Outside the ledger's access: the action may run any code.
        if isNew { action(lifetime) }
    }

    func tearDown() {
        let (children, sideEffects) = ledger.takeAll()
        for entry in children { entry.node.tearDown() }
        for (_, lifetime) in sideEffects { lifetime.end() }
    }

    func childSnapshots() -> [TreeSnapshot.Child] {
        let children = ledger.children
        return children.map { TreeSnapshot.Child(key: $0.key, snapshot: $0.node.snapshot()) }
    }

    func collectChildren(into nodes: inout [WorkflowTreeNode], depth: Int) {
        let children = ledger.children
        for entry in children { entry.node.collect(into: &nodes, depth: depth) }
    }
}

/// One child of a pass, in the order the pass rendered it. Not nested in the generic
/// `SubtreeManager`: a nested type would be generic too, and every array operation on it would
/// look its metadata up at run time (a sizeable share of a re-render's work, measured).
struct ChildEntry {
    let type: ObjectIdentifier
    let key: String
    let node: any AnyChildNode
    var claimed = false
}

/// A child's identity within its parent: concrete workflow type plus key.
struct ChildKey: Hashable {
    let type: ObjectIdentifier
    let key: String
}

/// What a parent needs of a child node whatever its type: teardown, snapshot, description.
protocol AnyChildNode: AnyObject {
    func tearDown()
    func snapshot() -> TreeSnapshot
    func collect(into nodes: inout [WorkflowTreeNode], depth: Int)
    /// The child's workflow type, for error messages.
    var workflowTypeDescription: String { get }
}

extension ChildNode {
    var workflowTypeDescription: String { "\(Child.self)" }
}
