import Foundation
import Logging

/// Rebalancing, the parent role: running children move, a few at a time, to where their
/// placement would put them now (`RebalancePlan`), each by the drain's planned handover (RELEASE,
/// the child's final flush, placed again from it with the events kept meanwhile).
///
/// Its cost follows what changes, not what is held: a plan (once per heartbeat interval) is
/// shown only the children that could move now, the hashed children a sweep after a change of
/// workers found away from their owner (`RebalanceProgress`) and a few children of each
/// least-loaded pool's most loaded members, found through the workers' loads; the sweep looks
/// at a bounded slice per timer check.
extension ParentDriver {
    /// How many of a donor's children a plan looks at per move it may make, before it gives up
    /// on that donor for this plan (its children are of other pools or moving).
    static let donorScanPerMove = 64

    /// From the timers: continues a sweep of the hashed children, then (once per heartbeat
    /// interval) plans and begins the moves the current picture calls for. Not during the start's
    /// placement grace (the pool is still filling), nor while this process is `shuttingDown`.
    func rebalance(now: ContinuousClock.Instant, shuttingDown: Bool) {
        guard let policy = configuration.rebalancing, !shuttingDown, now >= placementGraceEnds, workers.count > 1 else { return }
        let present = parent.workers.byConnection.filter { !$0.value.isDraining }
        let peers = present.values.map(\.placementCandidate)
        sweepHashedChildren(among: present.values, peers: peers)
        guard now >= nextRebalance else { return }
        nextRebalance = now + configuration.heartbeatInterval
        let moving = present.values.reduce(0) { $0 + $1.releasing.count }
        let budget = policy.movesAtOnce - moving
        guard budget > 0 else { return }
        let (hashed, examined) = rebalanceProgress.takeAway(limit: budget) { id in
            guard let proxy = proxies[id], let child = rebalanceCandidate(proxy), !child.isMoving else { return false }
            return RebalancePlan.isAwayFromOwner(child, among: peers, placement: poolPlacement)
        }
        countedVisits += examined
        var candidates = hashed.compactMap { proxies[$0].flatMap(rebalanceCandidate) }
        candidates += leastLoadedCandidates(present: present, perDonor: budget, policy: policy)
        guard !candidates.isEmpty else { return }
        for id in RebalancePlan.moves(children: candidates, workers: peers, placement: poolPlacement, policy: policy, alreadyMoving: moving) {
            guard let proxy = proxies[id], let host = parent.host(of: id), let peer = workers[host] else { continue }
            parent.releaseBegun(id, on: peer.id)
            rebalancing.insert(id)
            logger.info(
                "rebalancing: moving \(proxy.path) from \(peer.name)",
                metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "load": .stringConvertible(parent.workers[peer.id]?.children.count ?? 0)])
            sendToWorker(peer.id, kind: .release, correlationID: id, epoch: parent.epoch(of: id), nodePath: proxy.path, payloads: [])
        }
    }

    /// Looks at the sweep's next slice of hashed children (a new sweep begins when the members
    /// changed) and keeps those away from their owner for the plans.
    private func sweepHashedChildren(among present: some Collection<ParentStateMachine.Worker>, peers: [PlacementCandidate]) {
        guard !rebalanceProgress.hashedChildren.isEmpty else { return }
        let members = Set(present.map { RebalanceProgress.Member(name: $0.name, pool: $0.pool, stateVersions: $0.stateVersions) })
        for id in rebalanceProgress.nextSlice(members: members) {
            countedVisits += 1
            guard let proxy = proxies[id], let child = rebalanceCandidate(proxy), !child.isMoving,
                RebalancePlan.isAwayFromOwner(child, among: peers, placement: poolPlacement)
            else { continue }
            rebalanceProgress.found(away: id)
        }
    }

    /// For each least-loaded pool whose members' loads differ by `spread` or more: up to
    /// `perDonor` children of each member that could give (its load `spread` above the least),
    /// placed in that pool and not moving. Looks at no other worker's children, and at a bounded
    /// number of each donor's.
    private func leastLoadedCandidates(
        present: [WorkerID: ParentStateMachine.Worker], perDonor: Int, policy: RebalancePolicy
    ) -> [RebalancePlan.Child] {
        var candidates: [RebalancePlan.Child] = []
        for members in Dictionary(grouping: present, by: \.value.pool).values where members.count > 1 {
            let least = members.map(\.value.children.count).min() ?? 0
            for (_, donor) in members where donor.children.count - least >= policy.spread {
                var found = 0
                var looked = 0
                for id in donor.children {
                    guard found < perDonor, looked < perDonor * Self.donorScanPerMove else { break }
                    looked += 1
                    guard let proxy = proxies[id], let child = rebalanceCandidate(proxy), !child.isHashed, !child.isMoving,
                        child.pool == donor.pool
                    else { continue }
                    candidates.append(child)
                    found += 1
                }
                countedVisits += looked
            }
        }
        return candidates
    }

    /// `proxy`'s child as the plan sees it, if it runs in a pool on a worker that is not draining.
    private func rebalanceCandidate(_ proxy: any AnyRemoteChildProxy) -> RebalancePlan.Child? {
        guard let host = parent.host(of: proxy.childID), let worker = parent.workers[host], !worker.isDraining else { return nil }
        let pool: String
        let isHashed: Bool
        switch proxy.placement {
        case .pool(let name): (pool, isHashed) = (name, false)
        case .hashed(let name): (pool, isHashed) = (name, true)
        default: return nil
        }
        // Its worker writes its own version with the child's next snapshot (a worker of a newer
        // build migrated the state it was started from): that counts, though not acknowledged yet.
        let stateVersion = max(proxy.stateVersion, worker.placementCandidate.stateVersion(of: proxy.typeName))
        return RebalancePlan.Child(
            id: proxy.childID, path: proxy.path, pool: pool, isHashed: isHashed, worker: worker.name, isMoving: parent.isReleasing(proxy.childID, from: host),
            typeName: proxy.typeName, stateVersion: stateVersion)
    }
}
