/// An event's way through, the parent role: how far a child's events went to its placement and
/// the wait for their acknowledgement, whether the placement's OUTPUTS messages arrive without a
/// gap, and which of the child's outputs were delivered to its node (the worker's counterpart is
/// `WorkerStateMachine+Events.swift`).
extension ParentStateMachine {
    /// Events of `childID` up to `sequence` went to its placement (`eventsSent(to:at:)` starts
    /// the wait for their acknowledgement).
    mutating func eventsSent(to childID: UInt64, through sequence: UInt64, at now: Instant) {
        children.eventsSent(to: childID, through: sequence)
        eventsSent(to: childID, at: now)
    }

    /// Events for `childID` went to its placement: unless earlier ones already wait, they start
    /// the wait for an acknowledgement.
    mutating func eventsSent(to childID: UInt64, at now: Instant) {
        awaitingAcknowledgement.eventsSent(to: childID, at: now)
    }

    /// An acknowledgement of `childID`'s events through `sequence` arrived from its placement:
    /// the wait ends if it covers every event sent there, or starts again from now.
    mutating func acknowledged(_ childID: UInt64, through sequence: UInt64, at now: Instant) {
        acknowledged(childID, coversAllSent: sequence >= lastSentEvent(of: childID), at: now)
    }

    /// An acknowledgement for `childID` arrived from its placement; `coversAllSent`: of every
    /// event sent to it. The wait ends, or starts again from now.
    mutating func acknowledged(_ childID: UInt64, coversAllSent: Bool, at now: Instant) {
        awaitingAcknowledgement.acknowledged(childID, coversAllSent: coversAllSent, at: now)
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
        // Off only in the simulator's test that shows the check matters (`ProtocolChecks`).
        guard configuration.checks.parentChecksOutputsNumbers else { return .inOrder }
        return outputsMessageNumbers.take(childID: childID, epoch: epoch, number: number)
    }

    /// Per remote child: the epoch and number of the last OUTPUTS message taken from its worker.
    struct OutputsMessageNumbers {
        private var last: [UInt64: (epoch: UInt64, number: UInt64)] = [:]

        var count: Int { last.count }

        /// See `ParentStateMachine.outputsMessage(childID:epoch:number:)`.
        mutating func take(childID: UInt64, epoch: UInt64, number: UInt64) -> OutputsOrder {
            guard number > 0 else { return .inOrder }
            let previous = last[childID].flatMap { $0.epoch == epoch ? $0.number : nil } ?? 0
            guard number == previous + 1 else {
                last[childID] = nil
                return .lost(missing: (previous + 1)...max(previous + 1, number - 1))
            }
            last[childID] = (epoch, number)
            return .inOrder
        }

        /// `childID`'s placement ended (stopped, its worker left): its numbering is forgotten.
        mutating func forget(_ childID: UInt64) {
            last[childID] = nil
        }
    }

    /// Per remote child with events sent to its placement and not all acknowledged: since when
    /// its acknowledgements last moved on (or its first such event was sent). Iterated by the
    /// liveness rule (`livenessAction(of:at:)`).
    struct AcknowledgementWaits: Sequence {
        private var since: [UInt64: Instant] = [:]

        var count: Int { since.count }

        subscript(childID: UInt64) -> Instant? { since[childID] }

        func makeIterator() -> Dictionary<UInt64, Instant>.Iterator { since.makeIterator() }

        /// Events for `childID` went to its placement: unless earlier ones already wait, the
        /// wait starts now.
        mutating func eventsSent(to childID: UInt64, at now: Instant) {
            if since[childID] == nil { since[childID] = now }
        }

        /// An acknowledgement for `childID` arrived: the wait ends if it covers every event
        /// sent, or starts again from now.
        mutating func acknowledged(_ childID: UInt64, coversAllSent: Bool, at now: Instant) {
            since[childID] = coversAllSent ? nil : now
        }

        /// `childID` no longer waits (placed again, released, stopped, its worker left).
        mutating func end(for childID: UInt64) {
            since[childID] = nil
        }
    }

    /// An output's place in its child's history: the event whose action emitted it (`cause`, 0
    /// for an output no event caused) and its rank among that event's outputs.
    struct OutputTag: Comparable, Sendable {
        var cause: UInt64
        var ordinal: UInt32

        static let none = OutputTag(cause: 0, ordinal: 0)

        static func < (lhs: OutputTag, rhs: OutputTag) -> Bool {
            (lhs.cause, lhs.ordinal) < (rhs.cause, rhs.ordinal)
        }
    }

    /// Which outputs of a child were delivered, so that a replay's duplicates are dropped while a
    /// flush cut short by its worker's loss is delivered again in full by the next placement.
    struct OutputOrder: Equatable {
        /// The last output caused by an event and delivered (its flush complete).
        private(set) var delivered = OutputTag.none
        /// The last output taken from a flush whose remaining messages are still on the wire: it
        /// counts as delivered only once the flush is complete (`flushEnded()`).
        private(set) var partial: OutputTag?

        /// Whether the output tagged `cause`, `ordinal` (in emission order within its flush) is
        /// new and to be delivered; an output caused by an event whose outputs were delivered
        /// already is a replay's duplicate. Outputs no event caused are always new.
        mutating func take(cause: UInt64, ordinal: UInt32) -> Bool {
            guard cause > 0 else { return true }
            let tag = OutputTag(cause: cause, ordinal: ordinal)
            guard tag > (partial ?? delivered) else { return false }
            partial = tag
            return true
        }

        /// The last message of a flush was taken: its outputs are delivered.
        mutating func flushEnded() {
            if let partial { delivered = partial }
            partial = nil
        }

        /// The placement whose flush was arriving ended before it was complete: its outputs were
        /// not delivered (their events are not acknowledged either), and the next placement's
        /// replay delivers them.
        mutating func discardPartialFlush() {
            partial = nil
        }
    }

    /// Which outputs of one OUTPUTS message are delivered to the child's node
    /// (`outputsArrived(for:causes:ordinals:continues:)`): all of them unless a replay brought
    /// some delivered already.
    struct DeliveredOutputs: Equatable {
        /// Per output, whether it is delivered; `nil`: all are.
        private let kept: [Bool]?

        static let all = DeliveredOutputs(kept: nil)

        fileprivate init(kept: [Bool]?) {
            self.kept = kept
        }

        /// Whether the message's output at `index` is delivered.
        func contains(_ index: Int) -> Bool {
            kept?[index] ?? true
        }
    }

    /// An OUTPUTS message of `childID` tagged `causes`/`ordinals` (one per output, in emission
    /// order) arrived from its placement; `continues`: more messages of the same flush follow.
    /// Decides which of its outputs are new (a replay's duplicates are dropped) and, at the
    /// flush's last message, counts the flush's outputs as delivered. A child this machine does
    /// not keep has every output delivered and nothing kept.
    mutating func outputsArrived(for childID: UInt64, causes: [UInt64], ordinals: [UInt32], continues: Bool) -> DeliveredOutputs {
        DeliveredOutputs(kept: children.outputsArrived(for: childID, causes: causes, ordinals: ordinals, continues: continues))
    }

    /// `childID`'s output order (what was delivered), for inspection and tests.
    func outputOrder(of childID: UInt64) -> OutputOrder? {
        children[childID]?.outputs
    }
}
