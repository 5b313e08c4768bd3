/// Each remote child, the parent role: the fencing token of its placement, how far its events
/// went to that placement, and which of its outputs were delivered to its node.
///
/// What the node's snapshot keeps (the child's last acknowledged state, the events after it, its
/// last rendering) stays with the child's proxy, which that snapshot encodes without the engine;
/// so do the decoded values (renderings, outputs of a flush still arriving).
extension ParentStateMachine {
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

    /// A remote child as this machine keeps it, from its proxy's registration to its stop.
    struct Child: Equatable {
        /// The fencing token of its current placement: raised by every START, carried by every
        /// message about the child both ways; a message with another epoch is stale.
        var epoch: UInt64 = 0
        /// The last event sent to the current placement (0: none yet); events after it are due.
        var lastSentEvent: UInt64 = 0
        var outputs = OutputOrder()
    }

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
        children[childID] = Child()
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
        guard let index = children.index(forKey: childID) else { return Placement(epoch: 0, snapshotThrough: 0) }
        children.values[index].epoch += 1
        children.values[index].lastSentEvent = 0
        children.values[index].outputs.discardPartialFlush()
        return Placement(epoch: children.values[index].epoch, snapshotThrough: snapshotThrough)
    }

    /// Events of `childID` up to `sequence` went to its placement (`eventsSent(to:at:)` starts
    /// the wait for their acknowledgement).
    mutating func eventsSent(to childID: UInt64, through sequence: UInt64, at now: Instant) {
        if let index = children.index(forKey: childID) { children.values[index].lastSentEvent = sequence }
        eventsSent(to: childID, at: now)
    }

    /// `childID`'s output order, to take a message's outputs with (one lookup per message, not
    /// one per output) and give back (`setOutputOrder(_:of:)`). A child this machine does not
    /// keep gets a fresh order.
    func outputOrder(of childID: UInt64) -> OutputOrder {
        children[childID]?.outputs ?? OutputOrder()
    }

    /// Keeps `order` as `childID`'s, if the child is still kept (what took the outputs may have
    /// stopped it).
    mutating func setOutputOrder(_ order: OutputOrder, of childID: UInt64) {
        guard let index = children.index(forKey: childID) else { return }
        children.values[index].outputs = order
    }
}
