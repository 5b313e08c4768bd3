/// What the parent role's rebalancing keeps from one plan to the next, so that no plan and no
/// timer check walks every child held: the hashed children by id, and a sweep of them that runs
/// only after the workers changed, a slice per timer check.
///
/// A hashed child runs away from its owner only because of who was connected when it was
/// placed (its owner was away, draining, or could not read its state): so only a change of the
/// workers (one joins, leaves, drains, announces other state versions) can make children
/// movable. Then every hashed child is looked at once, `sweepSlice` per timer check, and those
/// found away are kept here until the plan's budget moves them (`takeAway(limit:isStillAway:)`).
/// Least-loaded pools need no sweep: their imbalance shows in the workers' loads, and the
/// driver looks only at the most loaded members' children. A value without I/O.
struct RebalanceProgress {
    /// A connected worker as far as hashed ownership depends on it.
    struct Member: Hashable {
        var name: String
        var pool: String
        var stateVersions: [String: Int]
    }

    /// How many hashed children one timer check looks at while a sweep runs: at 100,000 hashed
    /// children a sweep takes 196 checks (about 20 heartbeat intervals). Each look ranks the
    /// pool's members for the child's path (a few hashes and a small sort).
    static let sweepSlice = 512

    /// The children whose placement is hashed, kept as proxies register and stop.
    private(set) var hashedChildren: Set<UInt64> = []
    /// The members (not draining) the last sweep began for; `nil` before the first.
    private var sweptFor: Set<Member>?
    /// The hashed children the current sweep has not looked at yet.
    private var unswept: [UInt64] = []
    /// Hashed children the sweeps found away from their owner, waiting for the plan's budget.
    private var away: [UInt64] = []

    /// A proxy of a hashed child registered: it is swept from now on.
    mutating func hashedChildRegistered(_ id: UInt64) {
        hashedChildren.insert(id)
    }

    /// A proxy stopped.
    mutating func childStopped(_ id: UInt64) {
        hashedChildren.remove(id)
    }

    /// The next slice of hashed children to look at, given the members connected now: a change
    /// of members begins a new sweep of every hashed child (and forgets what the last one found,
    /// which the new picture may have settled).
    mutating func nextSlice(members: Set<Member>) -> ArraySlice<UInt64> {
        if members != sweptFor {
            sweptFor = members
            unswept = Array(hashedChildren)
            away = []
        }
        let slice = unswept.suffix(Self.sweepSlice)
        unswept.removeLast(slice.count)
        return slice
    }

    /// The sweep found `id` away from its owner.
    mutating func found(away id: UInt64) {
        away.append(id)
    }

    /// Up to `limit` children found away that still are (`isStillAway`: placed, not moving, not
    /// on their owner); those that no longer are are dropped. Returns them with how many were
    /// looked at.
    mutating func takeAway(limit: Int, isStillAway: (UInt64) -> Bool) -> (children: [UInt64], examined: Int) {
        var taken: [UInt64] = []
        var examined = 0
        while taken.count < limit, let id = away.popLast() {
            examined += 1
            if isStillAway(id) { taken.append(id) }
        }
        return (taken, examined)
    }
}
