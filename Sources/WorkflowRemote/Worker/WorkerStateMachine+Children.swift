// The worker role's state machine (`WorkerStateMachine.swift`): the children hosted here: START, STOP
// and props updates.
extension WorkerStateMachine {
    // MARK: Children

    /// What to do with a START.
    enum StartDecision: Equatable {
        case place
        case atCapacity
    }

    func startRequested() -> StartDecision {
        hosting.children.count < configuration.capacity ? .place : .atCapacity
    }

    /// The child now hosted for the placement `epoch` (after any earlier copy was discarded).
    /// `appliedThrough`: the last event its snapshot includes, as its START says (its header's
    /// acknowledgement): the placement's first event must be the next one. A parent whose
    /// WELCOME did not promise that (`welcomed(drains:startsCarryBase:)`) may send 0 for "not
    /// said": then any first event is taken, and the check starts after it.
    mutating func started(_ childID: UInt64, epoch: UInt64, path: String, child: Child, appliedThrough: UInt64) {
        hosting.placed(Hosted(
            childID: childID, child: child, epoch: epoch, path: path, applied: appliedThrough,
            knowsNextEvent: link.parentStartsCarryBase || appliedThrough > 0, acknowledged: appliedThrough))
        // Placed before the parent read this worker's DRAIN: it is released like the others.
        leaving.childPlaced()
    }

    /// STOP: the copy of `epoch` ends (one for another placement stays). Returns it.
    mutating func stopRequested(_ childID: UInt64, epoch: UInt64) -> Hosted? {
        guard hosting.children[childID]?.epoch == epoch else { return nil }
        return discard(childID)
    }

    /// Ends hosting `childID` and drops what it had queued for the parent. Returns its copy.
    @discardableResult
    mutating func discard(_ childID: UInt64) -> Hosted? {
        pending.discarded(childID)
        return hosting.removed(childID)
    }

    /// Props were applied to a child: work of an event's size in the slice.
    mutating func propsUpdated() {
        hosting.propsUpdated()
    }
}
