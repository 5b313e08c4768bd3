/// Which running children should move, as a value with no I/O: the engine describes its workers
/// and its children placed in pools, and gets back the children to hand over now (each by the
/// drain's planned handover: the child's final state, its events held and delivered on the new
/// worker, never `unavailable`).
///
/// - A **hashed** child moves when its owner (`PoolPlacement.hashed`) is connected and is not the
///   worker it runs on: a child that ran elsewhere while its owner was away moves back.
/// - In a **least-loaded** pool, while the most loaded member holds `spread` or more children
///   than the least loaded one, a child of the most loaded moves (the next placement puts it on
///   the least loaded): a worker that joins a busy pool takes its share.
///
/// At most `movesAtOnce` children move at a time, counting those already moving; hashed
/// children first, then pools by name, children by path, so a plan is the same for the same
/// picture.
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

        package init(id: UInt64, path: String, pool: String, isHashed: Bool, worker: String, isMoving: Bool) {
            self.id = id
            self.path = path
            self.pool = pool
            self.isHashed = isHashed
            self.worker = worker
            self.isMoving = isMoving
        }
    }

    /// A connected worker that takes new children (not draining).
    package struct Worker: Equatable {
        package var name: String
        package var pool: String
        /// Its children, of every type and placement.
        package var load: Int

        package init(name: String, pool: String, load: Int) {
            self.name = name
            self.pool = pool
            self.load = load
        }
    }

    /// The children to hand over now, in order.
    package static func moves(children: [Child], workers: [Worker], placement: PoolPlacement, policy: RebalancePolicy) -> [UInt64] {
        var budget = policy.movesAtOnce - children.filter(\.isMoving).count
        guard budget > 0 else { return [] }
        var load = Dictionary(workers.map { ($0.name, $0.load) }, uniquingKeysWith: +)
        var moves: [UInt64] = []
        let settled = children.filter { !$0.isMoving }.sorted { $0.path < $1.path }
        for child in settled where child.isHashed {
            guard budget > 0 else { return moves }
            let members = Set(workers.filter { $0.pool == child.pool }.map(\.name))
            guard case .worker(let owner) = placement.hashed(pool: child.pool, path: child.path, connected: members, withinGrace: false),
                owner != child.worker
            else { continue }
            moves.append(child.id)
            load[child.worker, default: 0] -= 1
            load[owner, default: 0] += 1
            budget -= 1
        }
        let pools = Set(settled.filter { !$0.isHashed }.map(\.pool)).sorted()
        for pool in pools {
            let members = workers.filter { $0.pool == pool }.map(\.name)
            var candidates = settled.filter { !$0.isHashed && $0.pool == pool }
            while budget > 0 {
                let byLoad = members.sorted { (load[$0] ?? 0, $0) < (load[$1] ?? 0, $1) }
                guard let least = byLoad.first, let most = byLoad.last, (load[most] ?? 0) - (load[least] ?? 0) >= policy.spread,
                    let index = candidates.lastIndex(where: { $0.worker == most })
                else { break }
                moves.append(candidates.remove(at: index).id)
                load[most, default: 0] -= 1
                load[least, default: 0] += 1
                budget -= 1
            }
        }
        return moves
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
