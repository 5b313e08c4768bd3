// The worker role's state machine (`WorkerStateMachine.swift`): the lease (fencing, the worker's
// half): nothing is applied once the parent has been silent for the liveness window; the children stop
// and the worker rejoins.
extension WorkerStateMachine {
    // MARK: The lease

    /// The silence since this worker last heard from or sent to its parent, when it exceeds the
    /// liveness window while children are hosted: the parent may have declared this worker dead
    /// and placed its children elsewhere, so nothing more may be applied here. `nil`: the lease
    /// holds.
    func silenceBeyondLease(at now: Instant) -> Duration? {
        guard configuration.hasParent, !isShuttingDown, !hosting.children.isEmpty else { return nil }
        let silence = now - min(link.lastHeard, link.lastSent)
        return silence > configuration.liveness ? silence : nil
    }

    /// Children stopped at once, and the drain that ended with them.
    struct Forgotten {
        var children: [Hosted]
        var drain: DrainOutcome?
    }

    /// What the driver does when the lease ran out, or the parent stayed silent.
    enum Fence {
        /// Leaving anyway (a drain began): the children stop, no reconnection.
        case stopWhileLeaving(silence: Duration, Forgotten)
        /// The children stop, the socket is replaced (its queued input unread) and HELLO sent.
        case reconnect(silence: Duration, attempt: Int, afterFailedHandshake: Bool, Forgotten)
    }

    /// Fences if the lease ran out (`silenceBeyondLease`); `nil` when it holds.
    mutating func fenceIfLeaseRanOut(at now: Instant) -> Fence? {
        guard let silence = silenceBeyondLease(at: now) else { return nil }
        return fence(silence: silence, at: now)
    }

    mutating func fence(silence: Duration, at now: Instant) -> Fence? {
        if isLeaving {
            guard !hosting.children.isEmpty || leaving.drain != nil else { return nil }
            return .stopWhileLeaving(silence: silence, forgetChildren())
        }
        return reconnect(silence: silence, at: now)
    }

    mutating func reconnect(silence: Duration, at now: Instant) -> Fence {
        let (attempt, afterFailedHandshake) = link.reconnecting(at: now)
        let forgotten = forgetChildren()
        return .reconnect(silence: silence, attempt: attempt, afterFailedHandshake: afterFailedHandshake, forgotten)
    }

    /// Stops hosting everything: the parent places these children again from their snapshots,
    /// so copies here would only diverge. Also ends a drain (nothing can be handed over now).
    mutating func forgetChildren() -> Forgotten {
        let drainOutcome = finishDrain(.notConnected)
        link.forgotten()
        let stopped = hosting.removedAll()
        pending.removedAll()
        return Forgotten(children: stopped, drain: drainOutcome)
    }
}
