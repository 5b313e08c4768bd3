import Testing
@testable import WorkflowRemote

/// The parent machine's record of each remote child: the epochs that fence its placements, how
/// far its events went, and which of its outputs were delivered, checked without a proxy.
@Suite struct ParentStateMachineChildTests {
    typealias Machine = ParentStateMachine
    let now = ContinuousClock.now
    let worker = WorkerID(bytes: [1])

    func machine(with children: [UInt64] = [7]) -> Machine {
        var machine = Machine(configuration: .init(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3, acknowledgementDeadline: .milliseconds(900)))
        for child in children { machine.childAdded(child) }
        return machine
    }

    /// `order.take`, outside `#expect` (which cannot call a mutating method).
    func take(_ order: inout Machine.OutputOrder, _ cause: UInt64, _ ordinal: UInt32) -> Bool {
        order.take(cause: cause, ordinal: ordinal)
    }

    @Test("each placement raises the child's epoch, and only its own: a message of an earlier placement is recognisably stale")
    func epochsPerPlacement() {
        var machine = machine(with: [7, 8])
        #expect(machine.epoch(of: 7) == 0)
        #expect(machine.newPlacement(of: 7, snapshotThrough: 0).epoch == 1)
        #expect(machine.newPlacement(of: 7, snapshotThrough: 0).epoch == 2)
        #expect(machine.epoch(of: 7) == 2)
        #expect(machine.epoch(of: 8) == 0)
        #expect(machine.newPlacement(of: 8, snapshotThrough: 0).epoch == 1)
    }

    @Test("a new placement says where its snapshot ends and has been sent no event yet")
    func snapshotThrough() {
        var machine = machine()
        _ = machine.newPlacement(of: 7, snapshotThrough: 0)
        machine.eventsSent(to: 7, through: 12, at: now)
        #expect(machine.lastSentEvent(of: 7) == 12)
        // Events 9 to 12 are not acknowledged: the next placement starts after 8 and replays them.
        #expect(machine.newPlacement(of: 7, snapshotThrough: 8) == .init(epoch: 2, snapshotThrough: 8))
        #expect(machine.lastSentEvent(of: 7) == 0)
    }

    @Test("events sent start the wait for their acknowledgement, which an acknowledgement of all of them ends")
    func eventsSentStartTheDeadline() {
        var machine = machine()
        machine.placed(7, on: worker)
        machine.eventsSent(to: 7, through: 3, at: now)
        #expect(machine.awaitingAcknowledgement[7] == now)
        machine.acknowledged(7, coversAllSent: 3 >= machine.lastSentEvent(of: 7), at: now + .milliseconds(5))
        #expect(machine.awaitingAcknowledgement[7] == nil)
    }

    @Test("outputs: a replay's duplicates are dropped, outputs no event caused never are")
    func outputsDeduplicated() {
        var order = Machine.OutputOrder()
        #expect(take(&order, 1, 0))
        #expect(take(&order, 1, 1))
        #expect(take(&order, 2, 0))
        order.flushEnded()
        #expect(order.delivered == .init(cause: 2, ordinal: 0))
        // The next placement replays events 2 and 3: event 2's output is a duplicate.
        #expect(!take(&order, 2, 0))
        #expect(!take(&order, 1, 1))
        #expect(take(&order, 0, 0))
        #expect(take(&order, 3, 0))
        order.flushEnded()
        #expect(order.delivered == .init(cause: 3, ordinal: 0))
    }

    @Test("outputs of a flush cut short by its worker's loss count as undelivered: the next placement's replay delivers them")
    func partialFlushDeliveredAgain() {
        var machine = machine()
        _ = machine.newPlacement(of: 7, snapshotThrough: 0)
        // The first message of a flush of events 1 to 4 arrives; the rest never does.
        let first = machine.outputsArrived(for: 7, causes: [1, 2], ordinals: [0, 0], continues: true)
        #expect(first == .all)
        #expect(machine.outputOrder(of: 7)?.partial == .init(cause: 2, ordinal: 0))
        // The worker is lost; the child is placed again and events 1 to 4 replayed.
        _ = machine.newPlacement(of: 7, snapshotThrough: 0)
        #expect(machine.outputOrder(of: 7)?.partial == nil)
        let replay = machine.outputsArrived(for: 7, causes: [1, 2, 3, 4], ordinals: [0, 0, 0, 0], continues: false)
        #expect((0..<4).allSatisfy { replay.contains($0) })
        #expect(machine.outputOrder(of: 7)?.delivered == .init(cause: 4, ordinal: 0))
    }

    @Test("a flush in several messages: its outputs count as delivered only after its last message")
    func flushInSeveralMessages() {
        var order = Machine.OutputOrder()
        #expect(take(&order, 5, 0))
        #expect(order.delivered == .none)
        // A later message of the same flush goes on from where the first left.
        #expect(!take(&order, 5, 0))
        #expect(take(&order, 6, 0))
        order.flushEnded()
        #expect(order.delivered == .init(cause: 6, ordinal: 0))
        #expect(order.partial == nil)
    }

    @Test("a stopped child is forgotten: its record, epoch and outputs go, and the machine's memory with them")
    func forgetting() {
        var machine = machine(with: [7, 8])
        _ = machine.newPlacement(of: 7, snapshotThrough: 0)
        let before = machine.memory
        machine.forget(7)
        #expect(machine.children[7] == nil)
        #expect(machine.epoch(of: 7) == 0)
        #expect(machine.memory == before - 1)
        // An unknown child's outputs are all delivered, and nothing is kept for it.
        #expect(machine.outputsArrived(for: 7, causes: [1], ordinals: [0], continues: false) == .all)
        #expect(machine.children[7] == nil)
    }
}
