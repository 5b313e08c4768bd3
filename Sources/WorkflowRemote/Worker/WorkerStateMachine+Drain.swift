// The worker role's state machine (`WorkerStateMachine.swift`): the drain (a planned departure: each
// child released to the parent, then GOODBYE) and the shutdown.
extension WorkerStateMachine {
    // MARK: Draining

    /// What `beginDrain` decided.
    enum DrainStart {
        /// A drain runs already: the caller waits for its outcome.
        case alreadyRunning
        /// Over at once, with this outcome.
        case finished(DrainOutcome)
        /// Begun: the driver flushes, then sends DRAIN.
        case begun(children: Int)
        /// Over at once: the parent predates draining.
        case unsupportedByParent(DrainOutcome)
    }

    mutating func beginDrain(deadline: Duration, at now: Instant) -> DrainStart {
        if drain != nil { return .alreadyRunning }
        let count = children.count
        guard configuration.hasParent, !isShuttingDown, link.isWelcomed else {
            return .finished(DrainOutcome(ending: .notConnected, children: count, handedOver: 0))
        }
        guard link.parentDrains else {
            return .unsupportedByParent(DrainOutcome(ending: .unsupportedByParent, children: count, handedOver: 0))
        }
        // Nothing to hand over: leave at once.
        guard count > 0 else { return .finished(DrainOutcome(ending: .handedOver, children: 0, handedOver: 0)) }
        isLeaving = true
        drain = Drain(deadline: now + deadline, children: count)
        return .begun(children: count)
    }

    /// What to do with a RELEASE.
    enum ReleaseDecision {
        /// No such copy here: answer with an empty released flush, so the parent stops waiting.
        case notHosted
        /// Held until forwarded events are acknowledged (`takeDeferredReleases`).
        case deferred
        /// Apply what is queued, render, send `flush(_:releasing: true)`, then `released(_:)`.
        case release(Child)
    }

    /// RELEASE for `childID`'s placement `epoch`. `forwardedEventsUnacknowledged`: this process,
    /// as a parent of its own workers, has events they have not acknowledged (a middle process
    /// of a nested tree): they are in no snapshot yet, so the answer waits.
    mutating func releaseRequested(
        _ childID: UInt64, epoch: UInt64, path: String, forwardedEventsUnacknowledged: Bool
    ) -> ReleaseDecision {
        guard let hosted = children[childID], hosted.epoch == epoch else { return .notHosted }
        if forwardedEventsUnacknowledged {
            deferredReleases.append(DeferredRelease(childID: childID, epoch: epoch, path: path))
            return .deferred
        }
        return .release(hosted.child)
    }

    /// The released child's final flush left: its copy here ends.
    mutating func released(_ childID: UInt64) -> Hosted? {
        guard let hosted = discard(childID) else { return nil }
        drain?.handedOver += 1
        return hosted
    }

    /// The RELEASEs held, once nothing forwarded waits for an acknowledgement.
    mutating func takeDeferredReleases(forwardedEventsUnacknowledged: Bool) -> [DeferredRelease] {
        guard !deferredReleases.isEmpty, !forwardedEventsUnacknowledged else { return [] }
        defer { deferredReleases = [] }
        return deferredReleases
    }

    /// After the deferred releases were answered: the drain's end, if the parent answered already.
    mutating func finishDrainIfAnswered() -> DrainOutcome? {
        guard drain?.answered == true, deferredReleases.isEmpty else { return nil }
        return finishDrain(.handedOver)
    }

    /// The parent's answer to DRAIN (after every RELEASE it sent): the drain's outcome, or `nil`
    /// while deferred releases are still to be answered.
    mutating func drainAnswered() -> DrainOutcome? {
        guard deferredReleases.isEmpty else {
            drain?.answered = true
            return nil
        }
        return finishDrain(.handedOver)
    }

    /// A drain whose deadline passed ends.
    mutating func drainDeadline(at now: Instant) -> DrainOutcome? {
        guard let drain, now >= drain.deadline else { return nil }
        return finishDrain(.deadlinePassed)
    }

    /// Ends the drain (if one runs) and returns its outcome.
    mutating func finishDrain(_ ending: DrainOutcome.Ending) -> DrainOutcome? {
        guard let current = drain else { return nil }
        drain = nil
        deferredReleases = []
        return DrainOutcome(ending: ending, children: max(current.children, current.handedOver), handedOver: current.handedOver)
    }

    // MARK: Shutdown

    /// The runtime stops: the drain ends, every child stops (the driver then says GOODBYE).
    mutating func shutDown() -> Forgotten {
        let drainOutcome = finishDrain(.interrupted)
        isShuttingDown = true
        let stopped = children.values.sorted { $0.path < $1.path }
        for hosted in stopped { discard(hosted.childID) }
        return Forgotten(children: stopped, drain: drainOutcome)
    }
}
