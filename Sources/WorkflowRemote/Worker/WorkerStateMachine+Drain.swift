// The worker role's state machine (`WorkerStateMachine.swift`): the drain (a planned departure: each
// child released to the parent, then GOODBYE) and the shutdown, with the departure's state
// (`Leaving`) and the only code that changes it.
extension WorkerStateMachine {
    /// A drain in progress: the parent was asked (DRAIN) to move this worker's children.
    struct Drain {
        let deadline: Instant
        /// Children hosted when the drain began, plus any a START in flight placed here meanwhile.
        fileprivate(set) var children: Int
        /// Children released: their final flush went to the parent and their copy here stopped.
        fileprivate(set) var handedOver = 0
        /// The parent answered while RELEASEs were deferred: the drain ends when they are answered.
        fileprivate(set) var answered = false
    }

    /// A RELEASE whose answer waits (a middle process with forwarded events unacknowledged).
    struct DeferredRelease: Equatable {
        let childID: UInt64
        let epoch: UInt64
        let path: String
    }

    /// The worker's departure as the protocol sees it: the drain in progress, the RELEASEs whose
    /// answer waits, whether it leaves for good and whether the runtime shuts down. Its fields
    /// change only through its methods, which the machine's drain, release, START and shutdown
    /// rules call.
    struct Leaving {
        /// The runtime stops: no lease, heartbeats or reconnection any more.
        private(set) var isShuttingDown = false
        /// Set once a drain began: a silent parent then ends the drain instead of a reconnection.
        private(set) var isLeaving = false
        /// The drain in progress, if one runs.
        private(set) var drain: Drain?
        /// The RELEASEs whose answer waits for forwarded events' acknowledgements.
        private(set) var deferredReleases: [DeferredRelease] = []

        /// DRAIN is sent for the `children` hosted; the drain ends at `deadline` at the latest.
        mutating func drainBegan(children: Int, deadline: Instant) {
            isLeaving = true
            drain = Drain(deadline: deadline, children: children)
        }

        /// A START placed a child here: during a drain it is released like the others.
        mutating func childPlaced() {
            drain?.children += 1
        }

        /// A RELEASE is held until forwarded events are acknowledged.
        mutating func releaseDeferred(_ release: DeferredRelease) {
            deferredReleases.append(release)
        }

        /// A released child's final flush left: one more handed over.
        mutating func childReleased() {
            drain?.handedOver += 1
        }

        /// The held RELEASEs, answered now.
        mutating func deferredReleasesAnswered() -> [DeferredRelease] {
            defer { deferredReleases = [] }
            return deferredReleases
        }

        /// The parent answered DRAIN: whether the drain ends now; while RELEASEs are held it
        /// ends once they are answered.
        mutating func drainAnswered() -> Bool {
            guard deferredReleases.isEmpty else {
                drain?.answered = true
                return false
            }
            return true
        }

        /// The drain (if one runs) ends with `ending`: its outcome.
        mutating func drainEnded(_ ending: DrainOutcome.Ending) -> DrainOutcome? {
            guard let current = drain else { return nil }
            drain = nil
            deferredReleases = []
            return DrainOutcome(ending: ending, children: max(current.children, current.handedOver), handedOver: current.handedOver)
        }

        /// The runtime stops: a drain in progress is interrupted (its outcome returned).
        mutating func shutDown() -> DrainOutcome? {
            defer { isShuttingDown = true }
            return drainEnded(.interrupted)
        }
    }

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
        if leaving.drain != nil { return .alreadyRunning }
        let count = hosting.children.count
        guard configuration.hasParent, !isShuttingDown, link.isWelcomed else {
            return .finished(DrainOutcome(ending: .notConnected, children: count, handedOver: 0))
        }
        guard link.parentDrains else {
            return .unsupportedByParent(DrainOutcome(ending: .unsupportedByParent, children: count, handedOver: 0))
        }
        // Nothing to hand over: leave at once.
        guard count > 0 else { return .finished(DrainOutcome(ending: .handedOver, children: 0, handedOver: 0)) }
        leaving.drainBegan(children: count, deadline: now + deadline)
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
        guard let hosted = hosting.children[childID], hosted.epoch == epoch else { return .notHosted }
        if forwardedEventsUnacknowledged {
            leaving.releaseDeferred(DeferredRelease(childID: childID, epoch: epoch, path: path))
            return .deferred
        }
        return .release(hosted.child)
    }

    /// The released child's final flush left: its copy here ends.
    mutating func released(_ childID: UInt64) -> Hosted? {
        guard let hosted = discard(childID) else { return nil }
        leaving.childReleased()
        return hosted
    }

    /// The RELEASEs held, once nothing forwarded waits for an acknowledgement.
    mutating func takeDeferredReleases(forwardedEventsUnacknowledged: Bool) -> [DeferredRelease] {
        guard !leaving.deferredReleases.isEmpty, !forwardedEventsUnacknowledged else { return [] }
        return leaving.deferredReleasesAnswered()
    }

    /// After the deferred releases were answered: the drain's end, if the parent answered already.
    mutating func finishDrainIfAnswered() -> DrainOutcome? {
        guard leaving.drain?.answered == true, leaving.deferredReleases.isEmpty else { return nil }
        return finishDrain(.handedOver)
    }

    /// The parent's answer to DRAIN (after every RELEASE it sent): the drain's outcome, or `nil`
    /// while deferred releases are still to be answered.
    mutating func drainAnswered() -> DrainOutcome? {
        guard leaving.drainAnswered() else { return nil }
        return finishDrain(.handedOver)
    }

    /// A drain whose deadline passed ends.
    mutating func drainDeadline(at now: Instant) -> DrainOutcome? {
        guard let drain = leaving.drain, now >= drain.deadline else { return nil }
        return finishDrain(.deadlinePassed)
    }

    /// Ends the drain (if one runs) and returns its outcome.
    mutating func finishDrain(_ ending: DrainOutcome.Ending) -> DrainOutcome? {
        leaving.drainEnded(ending)
    }

    // MARK: Shutdown

    /// The runtime stops: the drain ends, every child stops (the driver then says GOODBYE).
    mutating func shutDown() -> Forgotten {
        let drainOutcome = leaving.shutDown()
        let stopped = hosting.children.values.sorted { $0.path < $1.path }
        for hosted in stopped { discard(hosted.childID) }
        return Forgotten(children: stopped, drain: drainOutcome)
    }
}
