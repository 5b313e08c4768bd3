/// Placement, the parent role: a child's placements (the fencing token of each, how far its
/// events went there, kept in its record, `ParentStateMachine+Lifecycle.swift`) and which worker
/// hosts it (`ParentStateMachine+Workers.swift`).
///
/// What the node's snapshot keeps (the child's last acknowledged state, the events after it, its
/// last rendering) stays with the child's proxy, which that snapshot encodes without the driver;
/// so do the decoded values (renderings, outputs of a flush still arriving).
extension ParentStateMachine {
    /// What a new placement of a child starts from (`newPlacement(of:snapshotThrough:)`).
    struct Placement: Equatable {
        /// Its fencing token.
        var epoch: UInt64
        /// The last event the snapshot START carries includes: the events sent next follow it
        /// without a gap, so the worker can tell if the first of them was lost in transit.
        var snapshotThrough: UInt64
    }

    /// A remote child's proxy exists: its placements, events and outputs are kept from now on.
    mutating func childAdded(_ childID: UInt64) {
        children.add(childID)
    }

    /// The epoch of `childID`'s current (or last) placement; 0 before its first.
    func epoch(of childID: UInt64) -> UInt64 {
        children[childID]?.epoch ?? 0
    }

    /// The last event sent to `childID`'s current placement (0: none yet).
    func lastSentEvent(of childID: UInt64) -> UInt64 {
        children[childID]?.lastSentEvent ?? 0
    }

    /// START for `childID` is about to leave: a new epoch, so anything still on the way from or
    /// to an earlier placement is recognisably stale, and its events are sent again from the one
    /// after `snapshotThrough`, the last event its snapshot includes (the child's ledger knows
    /// it: `ChildEventLedger.snapshotThrough`; not this machine, which keeps only what went to the
    /// current placement, and a placement may have been sent nothing). A flush the earlier
    /// placement left incomplete is forgotten.
    mutating func newPlacement(of childID: UInt64, snapshotThrough: UInt64) -> Placement {
        guard let epoch = children.newPlacement(of: childID) else { return Placement(epoch: 0, snapshotThrough: 0) }
        return Placement(epoch: epoch, snapshotThrough: snapshotThrough)
    }

    /// The child `childID` was placed (START sent) on `id`. Returns the worker it moved from, if
    /// this placement ends a handover (a drain, a rebalance) rather than a failure.
    @discardableResult
    mutating func placed(_ childID: UInt64, on id: WorkerID) -> String? {
        workers.placed(childID, on: id)
        awaitingAcknowledgement.end(for: childID)
        return children.placed(childID, on: id)
    }

    /// The child `childID` no longer runs on `id` (stopped, refused, no answer in time): the
    /// worker's count of it (its phase is changed by what ended it, `childFailed(_:with:)`,
    /// `forget(_:)`). Returns whether that ended `id`'s drain (its last child waiting for a
    /// handover).
    @discardableResult
    mutating func unplaced(_ childID: UInt64, from id: WorkerID) -> Bool {
        awaitingAcknowledgement.end(for: childID)
        return workers.unplaced(childID, from: id)
    }

    /// The child `childID` is stopped for good: its record and OUTPUTS numbering are forgotten.
    mutating func forget(_ childID: UInt64) {
        children.forget(childID)
        outputsMessageNumbers.forget(childID)
        awaitingAcknowledgement.end(for: childID)
    }
}
