import Foundation
import Testing
import Workflow
@testable import WorkflowRemote

/// The parent's ledger of one remote child's events without a proxy or an engine: numbered once,
/// forgotten only when acknowledged, and due again in order to a new placement.
@Suite struct ChildEventLedgerTests {
    let state = TreeSnapshot(workflowType: "Counter", state: Data("{\"count\":3}".utf8))
    let later = TreeSnapshot(workflowType: "Counter", state: Data("{\"count\":5}".utf8))

    /// A ledger with events 1...count recorded, each to sink "s<n mod 3>" with the bytes [n].
    func ledger(recording count: Int) -> ChildEventLedger {
        var ledger = ChildEventLedger(snapshot: nil)
        for number in 1...count {
            let sequence = ledger.record(token: "s\(number % 3)", bytes: [UInt8(number)])
            #expect(sequence == UInt64(number))
        }
        return ledger
    }

    func sequences(_ events: some Collection<ChildEventLedger.Event>) -> [UInt64] {
        events.map(\.sequence)
    }

    @Test("events are numbered 1, 2, 3 … and kept, oldest first, with their token and bytes")
    func recordNumbersAndKeeps() {
        let ledger = ledger(recording: 4)
        #expect(ledger.lastSequence == 4)
        #expect(sequences(ledger.unacknowledged) == [1, 2, 3, 4])
        #expect(ledger.unacknowledged.map(\.token) == ["s1", "s2", "s0", "s1"])
        #expect(ledger.unacknowledged.map(\.bytes) == [[1], [2], [3], [4]])
        #expect(ledger.firstUnacknowledged == 1)
    }

    @Test("an acknowledgement forgets exactly the acknowledged prefix and says how many it forgot")
    func acknowledgementTrimsThePrefix() {
        var ledger = ledger(recording: 5)
        #expect(ledger.acknowledge(upTo: 2, snapshot: state) == 2)
        #expect(sequences(ledger.unacknowledged) == [3, 4, 5])
        #expect(ledger.unacknowledged.map(\.bytes) == [[3], [4], [5]])
        #expect(ledger.snapshot == state)
        #expect(ledger.firstUnacknowledged == 3)
        #expect(ledger.snapshotThrough == 2)
        #expect(ledger.acknowledge(upTo: 5, snapshot: later) == 3)
        #expect(ledger.unacknowledged.isEmpty)
        #expect(ledger.firstUnacknowledged == nil)
        #expect(ledger.snapshotThrough == 5)
        #expect(ledger.snapshot == later)
        // Numbering goes on after everything was acknowledged: a sequence is never reused.
        #expect(ledger.record(token: "s", bytes: []) == 6)
    }

    @Test("an acknowledgement older than one already taken forgets nothing more")
    func olderAcknowledgementLosesNothing() {
        var ledger = ledger(recording: 6)
        #expect(ledger.acknowledge(upTo: 3, snapshot: state) == 3)
        #expect(ledger.acknowledge(upTo: 1, snapshot: nil) == 0)
        #expect(ledger.acknowledge(upTo: 3, snapshot: nil) == 0, "the same one again")
        #expect(sequences(ledger.unacknowledged) == [4, 5, 6])
        #expect(sequences(ledger.events(after: 0)) == [4, 5, 6], "all still due to a new placement")
        #expect(ledger.snapshot == state, "an acknowledgement without a snapshot keeps the last one")
    }

    @Test("an acknowledgement of no event keeps every event, and its snapshot (a released child's final state) is taken")
    func snapshotOnlyAcknowledgement() {
        var ledger = ledger(recording: 2)
        #expect(ledger.acknowledge(Acknowledgement(sequence: 0, snapshot: nil)) == 0)
        #expect(ledger.snapshot == nil)
        #expect(ledger.acknowledge(Acknowledgement(sequence: 0, snapshot: state)) == 0)
        #expect(ledger.snapshot == state)
        #expect(sequences(ledger.unacknowledged) == [1, 2])
        #expect(ledger.acknowledge(Acknowledgement(sequence: 1, snapshot: later)) == 1)
        #expect(sequences(ledger.unacknowledged) == [2])
        #expect(ledger.snapshot == later)
    }

    @Test("due events: those after the last sent to the placement; after a move, every unacknowledged one in order")
    func dueEventsAndReplay() {
        var ledger = ledger(recording: 8)
        #expect(sequences(ledger.events(after: 8)).isEmpty, "all sent")
        #expect(sequences(ledger.events(after: 5)) == [6, 7, 8])
        #expect(ledger.acknowledge(upTo: 4, snapshot: state) == 4)
        // The child moves: its new placement was sent nothing (the parent machine's
        // `lastSentEvent` starts again at 0) and starts from the snapshot through event 4.
        var machine = ParentStateMachine(
            configuration: .init(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3, acknowledgementDeadline: .milliseconds(900)))
        machine.childAdded(7)
        machine.eventsSent(to: 7, through: 8, at: .now)
        let placement = machine.newPlacement(of: 7, snapshotThrough: ledger.snapshotThrough)
        #expect(placement.snapshotThrough == 4)
        let replay = ledger.events(after: machine.lastSentEvent(of: 7))
        #expect(sequences(replay) == [5, 6, 7, 8])
        #expect(replay.map(\.bytes) == [[5], [6], [7], [8]])
        #expect(replay.map(\.token) == ["s2", "s0", "s1", "s2"])
        // The slice keeps the ledger's indices (the engine packs messages by them).
        #expect(replay.startIndex == 0 && replay.endIndex == ledger.unacknowledged.count)
        // Events recorded after the replay went out are due after it, not replayed again.
        machine.eventsSent(to: 7, through: 8, at: .now)
        _ = ledger.record(token: "s", bytes: [9])
        #expect(sequences(ledger.events(after: machine.lastSentEvent(of: 7))) == [9])
    }

    @Test("a ledger continued from handed-over events numbers them anew, in order, and hands them over unchanged")
    func continuedFromPendingEvents() {
        let pending = [
            PendingRemoteEvent(token: "a", bytes: Data([1])), PendingRemoteEvent(token: "b", bytes: Data()),
            PendingRemoteEvent(token: "a", bytes: Data([3, 3])),
        ]
        var ledger = ChildEventLedger(snapshot: state, pendingEvents: pending)
        #expect(ledger.snapshot == state)
        #expect(sequences(ledger.unacknowledged) == [1, 2, 3])
        #expect(ledger.pendingEvents == pending)
        #expect(sequences(ledger.events(after: 0)) == [1, 2, 3])
        #expect(ledger.acknowledge(upTo: 1, snapshot: later) == 1)
        #expect(ledger.pendingEvents == Array(pending.dropFirst()))
        #expect(ChildEventLedger(snapshot: nil).pendingEvents.isEmpty)
    }
}
