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

/// A `SubtreeManager`'s bookkeeping: which children and side effects the pass in progress and the
/// one before declared. Not generic (not nested in the generic manager), so its array and
/// dictionary operations need no metadata looked up at run time; it only calls the nodes it holds
/// through `AnyChildNode` for descriptions, never to tear them down (the manager does that,
/// outside its access to this value).
struct SubtreeLedger {
    /// The children of the pass in progress (or of the last pass, between passes), in order.
    private(set) var children: [ChildEntry] = []
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
    /// The side effects declared by the pass in progress (or the last pass, between passes).
    private var sideEffects: [AnyHashable: Lifetime] = [:]
    /// The last pass's side effects, during a pass, less those declared again so far.
    private var previousSideEffects: [AnyHashable: Lifetime] = [:]

    /// What a pass left unclaimed, handed out to be ended, then back (`recycle`) for its storage.
    struct Leftovers {
        /// The last pass's children; those not `claimed` are to be torn down.
        var children: [ChildEntry]
        /// The last pass's side effects not declared again: to be ended.
        var sideEffects: [AnyHashable: Lifetime]
    }

    /// How `claim` found a child's identity.
    enum Claim {
        /// Rendered by the last pass: its node, now in this pass's children.
        case previous(any AnyChildNode)
        /// New in this pass (noted as created): the caller makes its node and `append`s it.
        case new
        /// Already rendered in this pass: the last pass's node of that identity, if it was
        /// claimed from there (its description names the type).
        case duplicate(previous: (any AnyChildNode)?)
    }

    mutating func beginPass() {
        // The tables trade places instead of being rebuilt: each keeps its capacity, so a
        // re-render of N children does not regrow a table to N on every pass.
        swap(&previous, &children)
        children.removeAll(keepingCapacity: true)
        cursor = 0
        previousIndex = nil
        if !sideEffects.isEmpty || !previousSideEffects.isEmpty { swap(&previousSideEffects, &sideEffects) }
    }

    /// Ends the pass's bookkeeping; returns what is left to end, if anything (the common pass,
    /// which declares everything again, returns `nil` and is done).
    mutating func endPass() -> Leftovers? {
        previousIndex = nil
        firstCreated = nil
        if !created.isEmpty { created.removeAll(keepingCapacity: true) }
        if previousSideEffects.isEmpty, !previous.contains(where: { !$0.claimed }) {
            previous.removeAll(keepingCapacity: true)
            return nil
        }
        var leftovers = Leftovers(children: [], sideEffects: [:])
        swap(&leftovers.children, &previous)
        swap(&leftovers.sideEffects, &previousSideEffects)
        return leftovers
    }

    /// Takes back the storage `endPass` handed out, emptied, for the next pass to reuse.
    mutating func recycle(_ leftovers: inout Leftovers) {
        leftovers.children.removeAll(keepingCapacity: true)
        leftovers.sideEffects.removeAll(keepingCapacity: true)
        if previous.isEmpty { swap(&previous, &leftovers.children) }
        if previousSideEffects.isEmpty { swap(&previousSideEffects, &leftovers.sideEffects) }
    }

    /// Claims the last pass's child of this identity, if there is one, and adds it to this
    /// pass's children: at the expected position when the order is unchanged, through the table
    /// otherwise. Otherwise notes the identity as created in this pass.
    mutating func claim(type: ObjectIdentifier, key: String) -> Claim {
        guard let position = claimPrevious(type: type, key: key) else {
            return noteCreated(ChildKey(type: type, key: key)) ? .new : .duplicate(previous: nil)
        }
        guard position >= 0 else { return .duplicate(previous: previous[-position - 1].node) }
        var entry = previous[position]
        entry.claimed = false
        children.append(entry)
        return .previous(entry.node)
    }

    /// Adds a child `claim` found `.new`.
    mutating func append(_ entry: ChildEntry) {
        children.append(entry)
    }

    /// Records a child created in this pass; `false` if one of that identity already was.
    private mutating func noteCreated(_ identity: ChildKey) -> Bool {
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

    /// The position in `previous` of the last pass's child of this identity, now claimed; `nil`
    /// if there is none, `-position - 1` if this pass already claimed it (a duplicate).
    private mutating func claimPrevious(type: ObjectIdentifier, key: String) -> Int? {
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
        if previous[position].claimed { return -position - 1 }
        previous[position].claimed = true
        cursor = position + 1
        return position
    }

    /// Declares the side effect `key` in this pass: its lifetime, the last pass's if it declared
    /// it too (`isNew` false), a new one otherwise; `nil` if this pass already declared it.
    mutating func declareSideEffect(key: AnyHashable) -> (lifetime: Lifetime, isNew: Bool)? {
        // Two lookups per declared side effect, not three: every pass re-declares each one (a
        // remote child's proxy is one), so this runs once per node and pass.
        let existing = previousSideEffects.removeValue(forKey: key)
        let lifetime = existing ?? Lifetime()
        if sideEffects.updateValue(lifetime, forKey: key) != nil { return nil }
        return (lifetime, existing == nil)
    }

    /// Empties the ledger for the node's teardown: hands out the children and side effects to end.
    mutating func takeAll() -> (children: [ChildEntry], sideEffects: [AnyHashable: Lifetime]) {
        let taken = (children, sideEffects)
        children = []
        sideEffects = [:]
        return taken
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
