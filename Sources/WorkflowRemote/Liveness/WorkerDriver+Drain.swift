import Foundation
import Logging
import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// Draining, the worker's side: a worker that leaves in order hands its children back to its
/// parent with their final state, and the parent places them on other workers before the worker
/// says GOODBYE (docs/ARCHITECTURE.md, "Draining a worker"; the parent's side is
/// `ParentDriver+Drain.swift`). It reuses the failover machinery (snapshots, epochs, the
/// unacknowledged-event list) with one difference: the parent waits for the final flush of every
/// child before it places the child again, so nothing is replayed that the old worker had applied.
extension WorkerDriver {
    /// Asks the parent to move this worker's children, and calls `completion` on the loop once
    /// the parent took them all back, the deadline passed, or there is nothing to drain into.
    func beginDrain(deadline: Duration, completion: @escaping (DrainOutcome) -> Void) {
        switch worker.beginDrain(deadline: deadline, at: now) {
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
        switch worker.releaseRequested(childID, epoch: epoch, path: path, forwardedEventsUnacknowledged: parentRole.hasUnacknowledgedForwardedEvents) {
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

    /// Answers the held RELEASEs once nothing forwarded waits for an acknowledgement (each loop
    /// iteration, before the flush).
    func answerDeferredReleases() {
        guard !worker.leaving.deferredReleases.isEmpty else { return }
        let releases = worker.takeDeferredReleases(forwardedEventsUnacknowledged: parentRole.hasUnacknowledgedForwardedEvents)
        guard !releases.isEmpty else { return }
        for release in releases { handleRelease(of: release.childID, epoch: release.epoch, path: release.path) }
        if let outcome = worker.finishDrainIfAnswered() { reportDrain(outcome) }
    }

    /// The drain's deadline, from the loop's timers: a drain still waiting at `now` for the
    /// parent's answer ends, its children moving from their last acknowledged state.
    func checkDrainDeadline(at now: ContinuousClock.Instant) {
        if let outcome = worker.drainDeadline(at: now) { reportDrain(outcome) }
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
}
