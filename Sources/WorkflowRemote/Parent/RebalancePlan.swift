/// Which running children should move, as a value with no I/O: the parent's driver describes its workers
/// and its children placed in pools, and gets back the children to hand over now (each by the
/// drain's planned handover: the child's final state, its events held and delivered on the new
/// worker, never `unavailable`).
///
/// - A **hashed** child moves when its owner (`PoolPlacement.hashed`) is connected and is not the
///   worker it runs on: a child that ran elsewhere while its owner was away moves back.
/// - In a **least-loaded** pool, while the most loaded member holds `spread` or more children
///   than the least loaded one, a child of the most loaded moves (the next placement puts it on
///   the least loaded): a worker that joins a busy pool takes its share.
/// - Either way a child moves only to a worker that reads the state version of its snapshot
///   (`PlacementCandidate.reads`): during a rolling upgrade, a child whose state a worker of the
///   new build migrated is never moved back to a worker of the old build, which could not read
///   it; only the old build's children move to either.
///
/// At most `movesAtOnce` children move at a time, counting those already moving; hashed
/// children first, then pools by name, children by path, so a plan is the same for the same
/// picture.
///
/// The plan is made from the children it is shown, not from every child held: the parent's
/// driver (`ParentDriver+Rebalance.swift`) shows it a bounded set, those a least-loaded pool's
/// most loaded members could give and the hashed children a sweep after a change of membership
/// found away from their owner (`isAwayFromOwner`), so planning costs the same with 100 children
/// or 100,000.
package struct RebalancePlan {
    /// A running child placed in a pool.
    package struct Child: Equatable {
        package var id: UInt64
        package var path: String
        package var pool: String
        package var isHashed: Bool
        package var worker: String
        /// Its handover has begun (a drain's or an earlier plan's).
        package var isMoving: Bool
        package var typeName: String
        /// The state version its next snapshot holds: the version of its latest snapshot, or
        /// the version its worker writes when that is newer (the worker may have migrated the
        /// state and not acknowledged it yet). It moves only to a worker that reads it.
        package var stateVersion: Int

        package init(
            id: UInt64, path: String, pool: String, isHashed: Bool, worker: String, isMoving: Bool, typeName: String = "", stateVersion: Int = 1
        ) {
            self.id = id
            self.path = path
            self.pool = pool
            self.isHashed = isHashed
            self.worker = worker
            self.isMoving = isMoving
            self.typeName = typeName
            self.stateVersion = stateVersion
        }
    }

    /// A connected worker that takes new children (not draining).
    package typealias Worker = PlacementCandidate

    /// The children to hand over now, in order.
    ///
    /// `alreadyMoving`: children moving now that are not among `children` (they count against
    /// `movesAtOnce` as those among them marked `isMoving` do).
    package static func moves(
        children: [Child], workers: [Worker], placement: PoolPlacement, policy: RebalancePolicy, alreadyMoving: Int = 0
    ) -> [UInt64] {
        var budget = policy.movesAtOnce - alreadyMoving - children.filter(\.isMoving).count
        guard budget > 0 else { return [] }
        var load = Dictionary(workers.map { ($0.name, $0.load) }, uniquingKeysWith: +)
        var moves: [UInt64] = []
        let settled = children.filter { !$0.isMoving }.sorted { $0.path < $1.path }
        for child in settled where child.isHashed {
            guard budget > 0 else { return moves }
            guard let target = owner(of: child, awayAmong: workers, placement: placement) else { continue }
            moves.append(child.id)
            load[child.worker, default: 0] -= 1
            load[target, default: 0] += 1
            budget -= 1
        }
        let pools = Set(settled.filter { !$0.isHashed }.map(\.pool)).sorted()
        for pool in pools {
            let members = workers.filter { $0.pool == pool }
            var candidates = settled.filter { !$0.isHashed && $0.pool == pool }
            while budget > 0 {
                let byLoad = members.sorted { (load[$0.name] ?? 0, $0.name) < (load[$1.name] ?? 0, $1.name) }
                // From the most loaded member down, its last child whose target (the least loaded
                // member that reads its state, where the next placement puts it) has `spread`
                // fewer children. A member whose children no emptier worker reads (a newer
                // build's, while the emptier ones run an older one) keeps them, and the next
                // member gives instead.
                var move: (index: Int, donor: String, target: String)?
                search: for donor in byLoad.reversed().map(\.name) {
                    for index in candidates.indices.reversed() where candidates[index].worker == donor {
                        let child = candidates[index]
                        guard let target = byLoad.first(where: { $0.reads(child.typeName, stateVersion: child.stateVersion) })?.name,
                            (load[donor] ?? 0) - (load[target] ?? 0) >= policy.spread
                        else { continue }
                        move = (index, donor, target)
                        break search
                    }
                }
                guard let (index, donor, target) = move else { break }
                moves.append(candidates.remove(at: index).id)
                load[donor, default: 0] -= 1
                load[target, default: 0] += 1
                budget -= 1
            }
        }
        return moves
    }
}

extension RebalancePlan {
    /// The owner of the hashed `child` among `workers` (the connected members of its pool that
    /// read its state version) when it is not the worker the child runs on: where the child
    /// moves. `nil`: it runs on its owner, or no member it could move to is connected.
    package static func owner(of child: Child, awayAmong workers: [Worker], placement: PoolPlacement) -> String? {
        let members = Set(workers.filter { $0.pool == child.pool && $0.reads(child.typeName, stateVersion: child.stateVersion) }.map(\.name))
        guard case .worker(let owner) = placement.hashed(pool: child.pool, path: child.path, connected: members, withinGrace: false),
            owner != child.worker
        else { return nil }
        return owner
    }

    /// Whether the hashed `child` runs away from its owner among `workers` (`owner(of:awayAmong:placement:)`).
    package static func isAwayFromOwner(_ child: Child, among workers: [Worker], placement: PoolPlacement) -> Bool {
        owner(of: child, awayAmong: workers, placement: placement) != nil
    }
}

/// How a parent rebalances the children it placed in pools while the tree runs
/// (`RemoteRuntimeConfiguration.rebalancing`); see `RebalancePlan` for the rules.
public struct RebalancePolicy: Sendable, Equatable {
    /// How many children may be moving at once. A move is a planned handover: the child's
    /// events wait on the parent for the length of one round trip to each worker, so a few at a
    /// time keep a rebalance invisible to clients.
    public var movesAtOnce: Int
    /// The difference in children between a least-loaded pool's most and least loaded members
    /// that makes a child move (at least 2: with 1 a child would move back and forth).
    public var spread: Int

    /// A policy; `spread` below 2 counts as 2.
    public init(movesAtOnce: Int = 4, spread: Int = 2) {
        self.movesAtOnce = max(1, movesAtOnce)
        self.spread = max(2, spread)
    }
}
