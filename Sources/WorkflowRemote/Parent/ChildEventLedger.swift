import Foundation
import Workflow

/// The parent's account of the events it sent one remote child: each numbered once, kept until
/// the child's worker acknowledges it, and sent again to the next placement until then.
///
/// This is what makes an event reach the child exactly once whatever fails: the snapshot of the
/// last acknowledgement plus the events after it *is* the child's state as the parent knows it
/// (what a new placement starts from, what the parent's own snapshot keeps). A value without
/// I/O, so that guarantee is tested on its own; its proxy (`RemoteChildProxy`) keeps it and the
/// parent's driver reads the events due from it. Recording an event appends to one array and allocates
/// nothing else: it runs once per event.
struct ChildEventLedger {
    /// An event as recorded: its sequence (1, 2, … for this child, never reused), the token of
    /// the sink it was sent to, and its encoded value.
    typealias Event = (sequence: UInt64, token: String, bytes: [UInt8])

    /// The sequence of the last event recorded (0: none yet).
    private(set) var lastSequence: UInt64 = 0
    /// Events recorded and not yet acknowledged, oldest first (ascending sequences).
    private(set) var unacknowledged: [Event] = []
    /// The child's state as of the last acknowledged event: where a new placement starts from.
    private(set) var snapshot: TreeSnapshot?

    /// A ledger that continues from `snapshot` and `pendingEvents` (a restored node's, or those
    /// the proxy this one replaces handed over): the events are recorded anew, in order.
    init(snapshot: TreeSnapshot?, pendingEvents: [PendingRemoteEvent] = []) {
        self.snapshot = snapshot
        unacknowledged.reserveCapacity(pendingEvents.count)
        for event in pendingEvents { _ = record(token: event.token, bytes: Array(event.bytes)) }
    }

    /// Numbers an event and keeps it until it is acknowledged; returns its sequence.
    mutating func record(token: String, bytes: [UInt8]) -> UInt64 {
        lastSequence += 1
        unacknowledged.append((lastSequence, token, bytes))
        return lastSequence
    }

    /// The worker applied every event up to `sequence` (`0`: none in this acknowledgement) and
    /// `snapshot`, if any, is its state after them. (A released child's final flush carries a
    /// snapshot even when it applied no event: its state after everything it was sent.) Forgets
    /// exactly the acknowledged prefix; an acknowledgement older than one already taken forgets
    /// nothing more. Returns how many events it forgot (their back-pressure slots are free).
    mutating func acknowledge(upTo sequence: UInt64, snapshot newSnapshot: TreeSnapshot?) -> Int {
        if let newSnapshot { snapshot = newSnapshot }
        guard sequence > 0 else { return 0 }
        let count = unacknowledged.prefix { $0.sequence <= sequence }.count
        if count > 0 { unacknowledged.removeFirst(count) }
        return count
    }

    /// `acknowledge(upTo:snapshot:)` for an acknowledgement as a flush carries it.
    mutating func acknowledge(_ acknowledgement: Acknowledgement) -> Int {
        guard !acknowledgement.isEmpty else { return 0 }
        return acknowledge(upTo: acknowledgement.sequence, snapshot: acknowledgement.snapshot)
    }

    /// The sequence of the oldest event not acknowledged (`nil`: every event recorded is in
    /// `snapshot`): a new placement's snapshot covers the events before it.
    var firstUnacknowledged: UInt64? { unacknowledged.first?.sequence }

    /// Whether the events up to `sequence` are all acknowledged.
    func hasAcknowledged(through sequence: UInt64) -> Bool {
        (firstUnacknowledged ?? .max) > sequence
    }

    /// The last event a new placement's snapshot includes (its START says so): every event
    /// before the first unacknowledged one, or, with none, every event recorded. The events sent
    /// next follow it without a gap, so the worker tells a lost first message from a new child.
    var snapshotThrough: UInt64 { firstUnacknowledged.map { $0 - 1 } ?? lastSequence }

    /// The unacknowledged events after `lastSent`, the last one sent to the current placement,
    /// oldest first: what is due to it. After a move (`lastSent` 0) that is every unacknowledged
    /// event, the replay. The slice keeps the ledger's indices.
    func events(after lastSent: UInt64) -> ArraySlice<Event> {
        // Searched from the newest: usually only this loop iteration's events are due.
        var start = unacknowledged.endIndex
        while start > unacknowledged.startIndex, unacknowledged[start - 1].sequence > lastSent { start -= 1 }
        return unacknowledged[start...]
    }

    /// The unacknowledged events as a node's snapshot keeps them, oldest first.
    var pendingEvents: [PendingRemoteEvent] {
        unacknowledged.map { PendingRemoteEvent(token: $0.token, bytes: Data($0.bytes)) }
    }
}
