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
