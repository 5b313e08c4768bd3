import Foundation
import Logging
import WireProtocol

/// Draining, the parent's side: a worker that asked to leave (DRAIN) gets nothing new; each child
/// it hosts is released (RELEASE), placed again from its final flush with the events kept
/// meanwhile, and the worker is answered once every RELEASE went out (docs/ARCHITECTURE.md,
/// "Draining a worker"; the worker's side is `WorkerDriver+Drain.swift`).
extension ParentDriver {
    /// Whether this process, as a parent, has events for its own workers that they have not
    /// acknowledged, counting those a sink took and whose send is still a queued job (the
    /// back-pressure count is taken at once, on the sender's thread). Children that have no
    /// worker now are not waited for: nothing can acknowledge them. A middle process's hosted
    /// child answers its own RELEASE only once this is false (`WorkerDriver+Drain.swift`).
    var hasUnacknowledgedForwardedEvents: Bool {
        proxies.walkAll().contains { parent.host(of: $0.childID) != nil && $0.outstanding.current > 0 }
    }

    /// DRAIN from a worker: nothing new is placed on it; each child it hosts is released (its
    /// events and new props wait here), then the worker is answered. Repeated, it only answers.
    func handleDrain(from peer: WorkerPeer) {
        if let worker = parent.workers[peer.id], !worker.isDraining {
            let moving = worker.children.filter { parent.host(of: $0) == peer.id }.compactMap { proxies[$0] }.sorted { $0.path < $1.path }
            let request = parent.drainRequested(by: peer.id, placedThere: moving.map(\.childID))
            logger.info(
                "\(peer.name) draining: moving \(moving.count) children", metadata: ["worker": "\(peer.name)", "children": .stringConvertible(moving.count)])
            for proxy in moving {
                sendToWorker(
                    peer.id, kind: .release, correlationID: proxy.childID, epoch: parent.epoch(of: proxy.childID), nodePath: proxy.path, payloads: [])
            }
            if request.drainedAlready { reportDrained(peer) }
        }
        // After every RELEASE: the worker knows nothing more is coming for it.
        sendToWorker(peer.id, kind: .drain, correlationID: 0, nodePath: "", payloads: [])
    }

    /// A released child's final flush has been applied: it is placed again by the next render,
    /// from the snapshot that flush carried, with the events kept meanwhile.
    func completeRelease(of proxy: any AnyRemoteChildProxy) {
        guard let host = parent.host(of: proxy.childID), parent.isReleasing(proxy.childID, from: host), let peer = workers[host] else { return }
        markChanged(proxy)
        answered(proxy)
        proxy.released()
        let canMoveAtOnce = if case .worker = placementChoice(for: proxy, withinGrace: false) { true } else { false }
        if parent.released(proxy.childID, from: peer.id, canMoveAtOnce: canMoveAtOnce) { reportDrained(peer) }
    }

    /// The child no longer waits for its release (released, stopped, or its worker left).
    func endRelease(of childID: UInt64, on peer: WorkerPeer) {
        if parent.releaseEnded(childID, on: peer.id) { reportDrained(peer) }
    }

    func reportDrained(_ peer: WorkerPeer) {
        let (moved, waiting) = parent.workers[peer.id].map { ($0.drainMoved, $0.drainWaiting) } ?? (0, 0)
        logger.info(
            "\(peer.name) drained: \(moved + waiting) children handed over, \(waiting) of them waiting for a worker",
            metadata: ["worker": "\(peer.name)", "moved": .stringConvertible(moved), "waiting": .stringConvertible(waiting)])
    }

    /// What a child placed by `placement` waits for, in words, once its worker drained.
    func waitingFor(_ placement: RemotePlacement, typeName: String) -> String {
        switch placement {
        case .worker(let name): "worker \(name) to join"
        case .pool(let pool), .hashed(let pool): "a worker of pool \(pool)"
        case .anyWorker, .configured, .local: "a worker hosting \(typeName)"
        }
    }
}
