/// Liveness, the parent role: any message from a worker is a sign of life; a worker silent for
/// `interval × liveness` is dead; a link this parent left idle for an interval gets a heartbeat.
extension ParentStateMachine {
    /// What the liveness rule asks for one worker.
    enum LivenessAction: Equatable {
        /// Silent for longer than the liveness window (`silence` so far): remove it
        /// (`workerLeft(_:)`), its children move.
        case declareDead(WorkerID, silence: Duration)
        case sendHeartbeat(WorkerID)
    }

    /// A message from `id` arrived.
    mutating func heard(from id: WorkerID, at now: Instant) {
        workers[id]?.lastHeard = now
    }

    /// A message to `id` left.
    mutating func sent(to id: WorkerID, at now: Instant) {
        workers[id]?.lastSent = now
    }

    /// The liveness rule for the worker on `id` at `now` (`nil`: nothing to do). Asked worker by
    /// worker, so what the driver does for one (a dead worker's children placed on another, a
    /// message sent) counts for the next.
    func livenessAction(of id: WorkerID, at now: Instant) -> LivenessAction? {
        guard let worker = workers[id] else { return nil }
        if now - worker.lastHeard > configuration.liveness { return .declareDead(id, silence: now - worker.lastHeard) }
        if now - worker.lastSent >= configuration.heartbeatInterval { return .sendHeartbeat(id) }
        return nil
    }
}
