import Foundation
import Logging

/// Rebalancing, the parent role: running children move, a few at a time, to where their
/// placement would put them now (`RebalancePlan`), each by the drain's planned handover (RELEASE,
/// the child's final flush, placed again from it with the events kept meanwhile).
extension ParentDriver {
    /// From the timers: plans and begins the moves the current picture calls for. Not during the
    /// start's placement grace (the pool is still filling), nor while this process is
    /// `shuttingDown`.
    func rebalance(now: ContinuousClock.Instant, shuttingDown: Bool) {
        guard let policy = configuration.rebalancing, !shuttingDown, now >= placementGraceEnds, now >= nextRebalance, workers.count > 1
        else { return }
        nextRebalance = now + configuration.heartbeatInterval
        var children: [RebalancePlan.Child] = []
        for proxy in proxies.values {
            guard let peer = proxy.worker, let worker = parent.workers[peer.id], !worker.isDraining else { continue }
            let pool: String
            let isHashed: Bool
            switch proxy.placement {
            case .pool(let name): (pool, isHashed) = (name, false)
            case .hashed(let name): (pool, isHashed) = (name, true)
            default: continue
            }
            // Its worker writes its own version with the child's next snapshot (a worker of a newer
            // build migrated the state it was started from): that counts, though not acknowledged yet.
            let stateVersion = max(proxy.stateVersion, worker.placementCandidate.stateVersion(of: proxy.typeName))
            children.append(
                RebalancePlan.Child(
                    id: proxy.childID, path: proxy.path, pool: pool, isHashed: isHashed, worker: peer.name, isMoving: proxy.isReleasing,
                    typeName: proxy.typeName, stateVersion: stateVersion))
        }
        guard !children.isEmpty else { return }
        let peers = parent.workers.values.filter { !$0.isDraining }.map(\.placementCandidate)
        for id in RebalancePlan.moves(children: children, workers: peers, placement: poolPlacement, policy: policy) {
            guard let proxy = proxies[id], let peer = proxy.worker else { continue }
            proxy.beginRelease()
            parent.releaseBegun(id, on: peer.id)
            rebalancing.insert(id)
            logger.info(
                "rebalancing: moving \(proxy.path) from \(peer.name)",
                metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "load": .stringConvertible(parent.workers[peer.id]?.children.count ?? 0)])
            sendToWorker(peer.id, kind: .release, correlationID: id, epoch: parent.epoch(of: id), nodePath: proxy.path, payloads: [])
        }
    }
}
