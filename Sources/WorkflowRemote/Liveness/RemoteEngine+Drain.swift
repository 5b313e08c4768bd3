import Foundation
import Logging
import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// A worker's drain in progress: it asked its parent (DRAIN) to move its children and waits for
/// the parent's answer, which comes after a RELEASE for each of them, or for the deadline.
struct WorkerDrain {
    let deadline: ContinuousClock.Instant
    /// Children hosted when the drain began, plus any a START in flight placed here meanwhile.
    var children: Int
    /// Children released: their final flush went to the parent and their copy here stopped.
    var handedOver = 0
    /// Who waits for the outcome (each `RemoteRuntime.drain` call).
    var completions: [(DrainOutcome) -> Void]
    /// The parent answered while RELEASEs were held (`deferredReleases`): the drain ends when
    /// they have been answered.
    var answered = false
}

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
        if drain != nil {
            drain?.completions.append(completion)
            return
        }
        let children = hosted.count
        guard sockets.hasUpstream, !shuttingDown, shared.isWelcomed else {
            completion(DrainOutcome(ending: .notConnected, children: children, handedOver: 0))
            return
        }
        guard parentDrains else {
            logger.notice("the parent does not support draining; leaving without a handover", metadata: ["children": .stringConvertible(children)])
            completion(DrainOutcome(ending: .unsupportedByParent, children: children, handedOver: 0))
            return
        }
        guard children > 0 else {
            // Nothing to hand over: leave at once. (A START still on its way is placed again when
            // the parent reads the GOODBYE, as after any departure; and a worker whose parent has
            // just stopped, which sent STOP for every child, does not wait for its silence.)
            completion(DrainOutcome(ending: .handedOver, children: 0, handedOver: 0))
            return
        }
        logger.info("draining: asking the parent to move \(children) children", metadata: ["children": .stringConvertible(children)])
        // What the children produced so far leaves ahead of the DRAIN.
        flushHosted()
        isLeaving = true
        drain = WorkerDrain(deadline: .now + deadline, children: children, completions: [completion])
        sendUpstream(kind: .drain, correlationID: 0, nodePath: "", payloads: [])
    }

    /// RELEASE: the child's final flush (every event the parent sent it came before this message,
    /// and each was applied as it arrived), marked released, then the copy here stops.
    func handleRelease(_ envelope: Envelope) {
        let childID = envelope.correlationID
        guard let child = hosted[childID], child.epoch == envelope.epoch else {
            // Not here (refused, stopped, or an older placement): say so, so the parent stops
            // waiting and places the child from what it has.
            sendReleased(childID: childID, epoch: envelope.epoch, path: envelope.nodePath)
            return
        }
        // A middle process: events the child forwarded to its own remote children and that
        // their workers have not acknowledged are in no snapshot yet (the child's snapshot holds
        // theirs as of their last acknowledgement). The answer waits until they are, so the
        // grandchildren move with them too; the parent sends nothing new for the child meanwhile.
        if hasUnacknowledgedForwardedEvents {
            deferredReleases.append(envelope)
            return
        }
        // Actions already queued on the child (a worker's, a timer's) are applied first, so the
        // final state includes them.
        // Events of this slice were applied without rendering (the child renders once per
        // slice): render now, so the final flush carries the rendering after them.
        child.drain()
        child.render()
        flush(childID, releasing: true)
        discardHosted(childID, because: "handed over to the parent (drain)")
        shared.count { $0.stopped += 1 }
        drain?.handedOver += 1
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
        guard deferredReleases.isEmpty else {
            drain?.answered = true
            return
        }
        finishDrain(.handedOver)
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
        guard !deferredReleases.isEmpty, !hasUnacknowledgedForwardedEvents else { return }
        let releases = deferredReleases
        deferredReleases = []
        for release in releases { handleRelease(release) }
        if drain?.answered == true { finishDrain(.handedOver) }
    }

    /// Ends the drain (if one runs), logs how it went and reports the outcome.
    func finishDrain(_ ending: DrainOutcome.Ending) {
        guard let current = drain else { return }
        drain = nil
        deferredReleases = []
        let outcome = DrainOutcome(ending: ending, children: max(current.children, current.handedOver), handedOver: current.handedOver)
        let metadata: Logger.Metadata = ["children": "\(outcome.children)", "handedOver": "\(outcome.handedOver)"]
        switch ending {
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
        for completion in current.completions { completion(outcome) }
    }

    /// The parent has been silent for the liveness window while this worker leaves: it may have
    /// declared this worker dead (or be gone itself), so the children stop before anything else
    /// queued for them is read (the fencing rule), and the drain ends. No reconnection: the worker
    /// is on its way out.
    func stopHostingWhileLeaving(silentFor silence: Duration) {
        guard !hosted.isEmpty || drain != nil else { return }
        logger.warning(
            "no word from the parent for the liveness window while draining; stopping hosted children",
            metadata: ["silentSeconds": .stringConvertible(silence.loggedSeconds), "children": .stringConvertible(hosted.count)])
        forgetHostedChildren()
    }

    /// Ends a drain whose deadline has passed (from the timers).
    func checkDrainDeadline(now: ContinuousClock.Instant) {
        if let drain, now >= drain.deadline { finishDrain(.deadlinePassed) }
    }

    // MARK: Parent side

    /// DRAIN from a worker: nothing new is placed on it; each child it hosts is released (its
    /// events and new props wait here), then the worker is answered. Repeated, it only answers.
    func handleDrain(from peer: WorkerPeer) {
        if !peer.isDraining {
            peer.isDraining = true
            let moving = peer.children.compactMap { proxies[$0] }.filter { $0.worker === peer }.sorted { $0.path < $1.path }
            peer.children = Set(moving.map(\.childID))
            logger.info(
                "\(peer.name) draining: moving \(moving.count) children", metadata: ["worker": "\(peer.name)", "children": .stringConvertible(moving.count)])
            for proxy in moving {
                proxy.beginRelease()
                peer.releasing.insert(proxy.childID)
                sendToWorker(peer.id, kind: .release, correlationID: proxy.childID, epoch: proxy.epoch, nodePath: proxy.path, payloads: [])
            }
            if peer.releasing.isEmpty { reportDrained(peer) }
        }
        // After every RELEASE: the worker knows nothing more is coming for it.
        sendToWorker(peer.id, kind: .drain, correlationID: 0, nodePath: "", payloads: [])
    }

    /// A released child's final flush has been applied: it is placed again by the next render,
    /// from the snapshot that flush carried, with the events kept meanwhile.
    func completeRelease(of proxy: any AnyRemoteChildProxy) {
        guard let peer = proxy.worker, proxy.isReleasing else { return }
        peer.children.remove(proxy.childID)
        awaiting.remove(proxy.childID)
        proxy.released(from: peer.name)
        settleChanged = true
        if chooseWorker(typeName: proxy.typeName, placement: proxy.placement, path: proxy.path) != nil {
            peer.drainMoved += 1
        } else {
            peer.drainWaiting += 1
        }
        endRelease(of: proxy.childID, on: peer)
    }

    /// The child no longer waits for its release (released, stopped, or its worker left).
    func endRelease(of childID: UInt64, on peer: WorkerPeer) {
        guard peer.releasing.remove(childID) != nil, peer.releasing.isEmpty, peer.isDraining else { return }
        reportDrained(peer)
    }

    func reportDrained(_ peer: WorkerPeer) {
        logger.info(
            "\(peer.name) drained: \(peer.drainMoved + peer.drainWaiting) children handed over, \(peer.drainWaiting) of them waiting for a worker",
            metadata: ["worker": "\(peer.name)", "moved": .stringConvertible(peer.drainMoved), "waiting": .stringConvertible(peer.drainWaiting)])
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
