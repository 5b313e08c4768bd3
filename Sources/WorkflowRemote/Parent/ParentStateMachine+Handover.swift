/// Handover, the parent role: a draining worker's children, and those a rebalance moves, are
/// released (RELEASE, answered by their final flush) and placed again from that flush, with the
/// events kept here meanwhile. Nothing is replayed that the old worker had applied.
extension ParentStateMachine {
    /// What a DRAIN from a worker calls for.
    struct DrainRequest: Equatable {
        /// The children to send RELEASE for, in the order given (none when repeated).
        var releases: [UInt64] = []
        /// The drain is over at once (nothing to hand over): report it drained.
        var drainedAlready = false
    }

    /// DRAIN from `id`: nothing new is placed on it; each child of `placedThere` (its children
    /// whose current placement is there, in the order to release them) is released. Repeated, it
    /// only asks for the answer. Either way the driver answers DRAIN after the RELEASEs.
    mutating func drainRequested(by id: WorkerID, placedThere: [UInt64]) -> DrainRequest {
        guard let drainedAlready = workers.drainBegun(by: id, placedThere: placedThere) else { return DrainRequest() }
        for child in placedThere { children.releaseBegun(child, from: id) }
        return DrainRequest(releases: placedThere, drainedAlready: drainedAlready)
    }

    /// A rebalance begins moving `childID` off `id` (RELEASE sent).
    mutating func releaseBegun(_ childID: UInt64, on id: WorkerID) {
        workers.releaseBegun(childID, on: id)
        children.releaseBegun(childID, from: id)
    }

    /// Whether `childID`'s final flush from `id` completes a release begun there (the child's
    /// phase is `releasing(from: id)`).
    func isReleasing(_ childID: UInt64, from id: WorkerID) -> Bool {
        children[childID]?.phase == .releasing(from: id)
    }

    /// The child `childID` no longer waits for its release on `id` (released, stopped, refused).
    /// Returns whether that ended `id`'s drain.
    @discardableResult
    mutating func releaseEnded(_ childID: UInt64, on id: WorkerID) -> Bool {
        workers.releaseEnded(childID, on: id)
    }

    /// The final flush of `childID` released from `id` was taken: it is no longer placed there;
    /// `canMoveAtOnce` says whether another worker takes it now (counted for the drain's report).
    /// Returns whether that ended `id`'s drain.
    mutating func released(_ childID: UInt64, from id: WorkerID, canMoveAtOnce: Bool) -> Bool {
        children.released(childID, from: id, worker: workers[id]?.name)
        guard workers[id] != nil else { return false }
        awaitingAcknowledgement.end(for: childID)
        return workers.released(childID, from: id, canMoveAtOnce: canMoveAtOnce)
    }
}
