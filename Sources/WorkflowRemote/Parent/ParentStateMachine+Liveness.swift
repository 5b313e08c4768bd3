/// Liveness, the parent role: any message from a worker is a sign of life; a worker silent for
/// `interval × liveness` is dead; a link this parent left idle for an interval gets a heartbeat.
extension ParentStateMachine {
    /// What the liveness rule asks for one worker.
    enum LivenessAction: Equatable {
        /// Silent for longer than the liveness window (`silence` so far): remove it
        /// (`workerLeft(_:)`), its children move.
        case declareDead(WorkerID, silence: Duration)
        /// Alive, but the events sent to its child `childID` have waited `waited` for an
        /// acknowledgement, past the deadline: messages were lost in transit (events to it, or its
        /// OUTPUTS, the last ones, with no later message to show the gap; or a send queue that
        /// was full). Remove it as after a gap in its OUTPUTS numbers: it joins again on a fresh
        /// connection, and its children move from their last acknowledged state.
        case declareLost(WorkerID, childID: UInt64, waited: Duration)
        case sendHeartbeat(WorkerID)
    }

    /// A message from `id` arrived.
    mutating func heard(from id: WorkerID, at now: Instant) {
        workers.heard(from: id, at: now)
    }

    /// A message to `id` left.
    mutating func sent(to id: WorkerID, at now: Instant) {
        workers.sent(to: id, at: now)
    }

    /// The liveness rule for the worker on `id` at `now` (`nil`: nothing to do). Asked worker by
    /// worker, so what the driver does for one (a dead worker's children placed on another, a
    /// message sent) counts for the next.
    ///
    /// Silence, and an acknowledgement's wait, are counted up to `listenedUntil` (`nil`: `now`),
    /// when the parent last looked at its sockets: what arrived after is unread, so a loop that
    /// stalled in a job (a stopping coordinator sending 100,000 STOPs took over a second) does
    /// not take the workers it did not listen to meanwhile for dead. Its next poll reads them.
    func livenessAction(of id: WorkerID, at now: Instant, listenedUntil: Instant? = nil) -> LivenessAction? {
        guard let worker = workers[id] else { return nil }
        let listened = listenedUntil ?? now
        if listened - worker.lastHeard > configuration.liveness { return .declareDead(id, silence: listened - worker.lastHeard) }
        // The children waiting for an acknowledgement are few (those with events in flight): they
        // are walked, not the worker's children. The lowest child id overdue is named.
        var overdue: (child: UInt64, since: Instant)?
        for (child, since) in awaitingAcknowledgement
        where configuration.checks.parentDeadlinesAcknowledgements && listened - since > configuration.acknowledgementDeadline
            && child < (overdue?.child ?? .max) && worker.children.contains(child)
        {
            overdue = (child, since)
        }
        if let overdue { return .declareLost(id, childID: overdue.child, waited: listened - overdue.since) }
        if now - worker.lastSent >= configuration.heartbeatInterval { return .sendHeartbeat(id) }
        return nil
    }
}
