/// Placement, the parent role: which worker hosts which child, and whether a placement's OUTPUTS
/// messages arrive without a gap.
extension ParentStateMachine {
    /// The child `childID` was placed (START sent) on `id`.
    mutating func placed(_ childID: UInt64, on id: WorkerID) {
        workers[id]?.children.insert(childID)
        awaitingAcknowledgement[childID] = nil
    }

    /// The child `childID` no longer runs on `id` (stopped, refused, no answer in time). Returns
    /// whether that ended `id`'s drain (its last child waiting for a handover).
    @discardableResult
    mutating func unplaced(_ childID: UInt64, from id: WorkerID) -> Bool {
        workers[id]?.children.remove(childID)
        awaitingAcknowledgement[childID] = nil
        return releaseEnded(childID, on: id)
    }

    /// The child `childID` is stopped for good: its record and OUTPUTS numbering are forgotten.
    mutating func forget(_ childID: UInt64) {
        children[childID] = nil
        outputsMessageNumbers[childID] = nil
        awaitingAcknowledgement[childID] = nil
    }

    /// Events for `childID` went to its placement: unless earlier ones already wait, they start
    /// the wait for an acknowledgement.
    mutating func eventsSent(to childID: UInt64, at now: Instant) {
        if awaitingAcknowledgement[childID] == nil { awaitingAcknowledgement[childID] = now }
    }

    /// An acknowledgement for `childID` arrived from its placement; `coversAllSent`: of every
    /// event sent to it. The wait ends, or starts again from now.
    mutating func acknowledged(_ childID: UInt64, coversAllSent: Bool, at now: Instant) {
        awaitingAcknowledgement[childID] = coversAllSent ? nil : now
    }

    /// Whether an OUTPUTS message follows the last one taken for its placement without a gap.
    enum OutputsOrder: Equatable {
        case inOrder
        /// Messages `missing` never arrived: the connection broke and lost what was in flight
        /// while libzmq reconnected by itself. The worker is to be treated as gone.
        case lost(missing: ClosedRange<UInt64>)
    }

    /// An OUTPUTS message numbered `number` (from 1 per placement; 0, from a worker that does not
    /// number them, is not checked) for `childID`'s placement `epoch` arrived.
    mutating func outputsMessage(childID: UInt64, epoch: UInt64, number: UInt64) -> OutputsOrder {
        guard number > 0 else { return .inOrder }
        let last = outputsMessageNumbers[childID].flatMap { $0.epoch == epoch ? $0.number : nil } ?? 0
        guard number == last + 1 else {
            outputsMessageNumbers[childID] = nil
            return .lost(missing: (last + 1)...max(last + 1, number - 1))
        }
        outputsMessageNumbers[childID] = (epoch, number)
        return .inOrder
    }
}
