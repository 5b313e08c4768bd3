import Foundation
import Logging
import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// Draining: a worker that leaves in order hands its children back to its parent with their final
/// state, and the parent places them on other workers before the worker says GOODBYE
/// (docs/ARCHITECTURE.md, "Draining a worker"). It reuses the failover machinery (snapshots,
/// epochs, the unacknowledged-event list) with one difference: the parent waits for the final
/// flush of every child before it places the child again, so nothing is replayed that the old
/// worker had applied.
extension RemoteEngine {
    // MARK: Worker side

    /// Asks the parent to move this worker's children, and calls `completion` on the loop once
    /// the parent took them all back, the deadline passed, or there is nothing to drain into.
    func beginDrain(deadline: Duration, completion: @escaping (DrainOutcome) -> Void) {
        switch worker.beginDrain(deadline: deadline, at: .now) {
        case .alreadyRunning:
            drainCompletions.append(completion)
        case .finished(let outcome):
            completion(outcome)
        case .unsupportedByParent(let outcome):
            logger.notice("the parent does not support draining; leaving without a handover", metadata: ["children": .stringConvertible(outcome.children)])
            completion(outcome)
        case .begun(let children):
            logger.info("draining: asking the parent to move \(children) children", metadata: ["children": .stringConvertible(children)])
            drainCompletions = [completion]
            // What the children produced so far leaves ahead of the DRAIN.
            flushHosted()
            sendUpstream(kind: .drain, correlationID: 0, nodePath: "", payloads: [])
        }
    }

    /// RELEASE: the child's final flush (every event the parent sent it came before this message,
    /// and each was applied as it arrived), marked released, then the copy here stops.
    func handleRelease(_ envelope: Envelope) {
        handleRelease(of: envelope.correlationID, epoch: envelope.epoch, path: envelope.nodePath)
    }

    func handleRelease(of childID: UInt64, epoch: UInt64, path: String) {
        // A middle process: events the child forwarded to its own remote children and that
        // their workers have not acknowledged are in no snapshot yet (the child's snapshot holds
        // theirs as of their last acknowledgement). The answer waits until they are, so the
        // grandchildren move with them too; the parent sends nothing new for the child meanwhile.
        switch worker.releaseRequested(childID, epoch: epoch, path: path, forwardedEventsUnacknowledged: hasUnacknowledgedForwardedEvents) {
        case .notHosted:
            // Not here (refused, stopped, or an older placement): say so, so the parent stops
            // waiting and places the child from what it has.
            sendReleased(childID: childID, epoch: epoch, path: path)
        case .deferred:
            break
        case .release(let child):
            // Actions already queued on the child (a worker's, a timer's) are applied first, so
            // the final state includes them. Events of this slice were applied without rendering
            // (the child renders once per slice): render now, so the final flush carries the
            // rendering after them.
            child.drain()
            child.render()
            flush(childID, releasing: true)
            if let hosted = worker.released(childID) { stopHosting(hosted, because: "handed over to the parent (drain)") }
            shared.count { $0.stopped += 1 }
        }
    }

    /// A released flush for a child this worker does not host: no outputs, no snapshot.
    func sendReleased(childID: UInt64, epoch: UInt64, path: String) {
        let info = OutputsPayload(
            causes: [], ordinals: [], lengths: [], snapshot: nil, continues: false, renderingSequence: nil, released: true)
        guard let header = try? codec.encode(info) else { return }
        sendUpstream(kind: .outputs, correlationID: childID, epoch: epoch, nodePath: path, payloads: [header])
    }

    /// The parent's answer to DRAIN. Every RELEASE it sent for this worker came before it, so the
    /// handover is complete once those are answered; a copy still hosted is one the parent no
    /// longer counts on here (it stops with the shutdown that follows).
    func handleDrainAnswer() {
        if let outcome = worker.drainAnswered() { reportDrain(outcome) }
    }

    /// Whether this process, as a parent, has events for its own workers that they have not
    /// acknowledged, counting those a sink took and whose send is still a queued job (the
    /// back-pressure count is taken at once, on the sender's thread). Children that have no
    /// worker now are not waited for: nothing can acknowledge them.
    var hasUnacknowledgedForwardedEvents: Bool {
        proxies.values.contains { $0.worker != nil && $0.outstanding.current > 0 }
    }

    /// Answers the held RELEASEs once nothing forwarded waits for an acknowledgement (each loop
    /// iteration, before the flush).
    func answerDeferredReleases() {
        guard !worker.deferredReleases.isEmpty else { return }
        let releases = worker.takeDeferredReleases(forwardedEventsUnacknowledged: hasUnacknowledgedForwardedEvents)
        guard !releases.isEmpty else { return }
        for release in releases { handleRelease(of: release.childID, epoch: release.epoch, path: release.path) }
        if let outcome = worker.finishDrainIfAnswered() { reportDrain(outcome) }
    }

    /// Logs how a drain that ended went and reports its outcome to who waits for it.
    func reportDrain(_ outcome: DrainOutcome) {
        let metadata: Logger.Metadata = ["children": "\(outcome.children)", "handedOver": "\(outcome.handedOver)"]
        switch outcome.ending {
        case .handedOver:
            logger.info("drained: \(outcome.handedOver) children handed over to the parent", metadata: metadata)
        case .deadlinePassed:
            logger.warning(
                "drain deadline passed: \(outcome.notHandedOver) of \(outcome.children) children not handed over; they move from their last acknowledged state",
                metadata: metadata)
        case .notConnected, .interrupted, .unsupportedByParent:
            if outcome.notHandedOver > 0 {
                logger.warning("drain ended (\(outcome)): \(outcome.notHandedOver) children not handed over", metadata: metadata)
            }
        }
        let completions = drainCompletions
        drainCompletions = []
        for completion in completions { completion(outcome) }
    }

    // MARK: Parent side

    /// DRAIN from a worker: nothing new is placed on it; each child it hosts is released (its
    /// events and new props wait here), then the worker is answered. Repeated, it only answers.
    func handleDrain(from peer: WorkerPeer) {
        if let worker = parent.workers[peer.id], !worker.isDraining {
            let moving = worker.children.compactMap { proxies[$0] }.filter { $0.worker === peer }.sorted { $0.path < $1.path }
            let request = parent.drainRequested(by: peer.id, placedThere: moving.map(\.childID))
            logger.info(
                "\(peer.name) draining: moving \(moving.count) children", metadata: ["worker": "\(peer.name)", "children": .stringConvertible(moving.count)])
            for proxy in moving {
                proxy.beginRelease()
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
        guard let peer = proxy.worker, proxy.isReleasing else { return }
        awaiting.remove(proxy.childID)
        proxy.released(from: peer.name)
        settleChanged = true
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
