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
final class SubtreeManager<W: Workflow> {
    /// The children of the pass in progress (or of the last pass, between passes), in order.
    private var children: [ChildEntry] = []
    /// The last pass's children, during a pass; `claimed` marks those rendered again.
    private var previous: [ChildEntry] = []
    /// Where the next child of this pass is expected in `previous`.
    private var cursor = 0
    /// `previous`'s positions by (type, key); built the first time a child is out of place.
    private var previousIndex: [ChildKey: Int]?
    /// The identities of children created in this pass, to catch one rendered twice: the first
    /// on its own (a pass that creates one child, as each level of a chain does, hashes and
    /// allocates nothing for it), the rest in a set.
    private var firstCreated: ChildKey?
    private var created: Set<ChildKey> = []
    private var sideEffects: [AnyHashable: Lifetime] = [:]
    private var previousSideEffects: [AnyHashable: Lifetime] = [:]

    func beginPass() {
        // The tables trade places instead of being rebuilt: each keeps its capacity, so a
        // re-render of N children does not regrow a table to N on every pass.
        swap(&previous, &children)
        children.removeAll(keepingCapacity: true)
        cursor = 0
        previousIndex = nil
        if !sideEffects.isEmpty || !previousSideEffects.isEmpty { swap(&previousSideEffects, &sideEffects) }
    }

    func endPass() {
        for entry in previous where !entry.claimed { entry.node.tearDown() }
        previous.removeAll(keepingCapacity: true)
        previousIndex = nil
        firstCreated = nil
        if !created.isEmpty { created.removeAll(keepingCapacity: true) }
        if !previousSideEffects.isEmpty {
            for (_, lifetime) in previousSideEffects { lifetime.end() }
            previousSideEffects.removeAll(keepingCapacity: true)
        }
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
        if let position = claimPrevious(type: type, key: key) {
            // The entry moves over as it is (its existential is not rebuilt, which would look the
            // node's conformance up again). It holds `Child`'s identity and this manager's parent
            // is always `W`, so the node is a `ChildNode<Child, W>`; a checked cast would look
            // the type up every pass.
            var entry = previous[position]
            entry.claimed = false
            children.append(entry)
            child = unsafeDowncast(entry.node, to: ChildNode<Child, W>.self)
            child.outputMap = outputMap
            child.passOutput = passOutput
            child.update(workflow: workflow)
        } else {
            guard noteCreated(ChildKey(type: type, key: key)) else { duplicate(Child.self, key: key) }
            child = ChildNode(
                workflow: workflow, key: key, parent: parent, snapshot: parent.pendingSnapshot(of: Child.self, key: key),
                outputMap: outputMap)
            child.passOutput = passOutput
            children.append(ChildEntry(type: type, key: key, node: child))
        }
        return child.render()
    }

    /// Records a child created in this pass; `false` if one of that identity already was.
    private func noteCreated(_ identity: ChildKey) -> Bool {
        guard let first = firstCreated else {
            firstCreated = identity
            return true
        }
        if created.isEmpty {
            if first == identity { return false }
            created.insert(first)
        }
        return created.insert(identity).inserted
    }

    /// Claims the last pass's child of this identity, if there is one: at the expected position
    /// when the order is unchanged, through the table otherwise. Stops on a duplicate.
    private func claimPrevious(type: ObjectIdentifier, key: String) -> Int? {
        if cursor < previous.count, previous[cursor].type == type, previous[cursor].key == key, !previous[cursor].claimed {
            previous[cursor].claimed = true
            cursor += 1
            return cursor - 1
        }
        if previous.isEmpty { return nil }
        if previousIndex == nil {
            var index: [ChildKey: Int] = [:]
            index.reserveCapacity(previous.count)
            for (position, entry) in previous.enumerated() { index[ChildKey(type: entry.type, key: entry.key)] = position }
            previousIndex = index
        }
        guard let position = previousIndex?[ChildKey(type: type, key: key)] else { return nil }
        if previous[position].claimed { duplicate(W.self, key: key, typeName: "\(previous[position].node.workflowTypeDescription)") }
        previous[position].claimed = true
        cursor = position + 1
        return position
    }

    private func duplicate<Child>(_ type: Child.Type, key: String, typeName: String? = nil) -> Never {
        preconditionFailure(
            "\(W.self) rendered a child of type \(typeName ?? "\(Child.self)") with key \"\(key)\" more than once in one render pass. "
                + "Give each child of the same type a unique key.")
    }

    func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        // Two lookups per declared side effect, not three: every pass re-declares each one (a
        // remote child's proxy is one), so this runs once per node and pass.
        let existing = previousSideEffects.removeValue(forKey: key)
        let lifetime = existing ?? Lifetime()
        if sideEffects.updateValue(lifetime, forKey: key) != nil {
            preconditionFailure("\(W.self) declared the side effect \(key) more than once in one render pass.")
        }
        if existing == nil { action(lifetime) }
    }

    func tearDown() {
        for entry in children { entry.node.tearDown() }
        children = []
        for (_, lifetime) in sideEffects { lifetime.end() }
        sideEffects = [:]
    }

    func childSnapshots() -> [TreeSnapshot.Child] {
        children.map { TreeSnapshot.Child(key: $0.key, snapshot: $0.node.snapshot()) }
    }

    func collectChildren(into nodes: inout [WorkflowTreeNode], depth: Int) {
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
