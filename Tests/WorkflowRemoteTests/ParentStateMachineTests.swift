import Testing
@testable import WorkflowRemote

/// The parent role's state machine without sockets, threads or a clock: each input carries its
/// time, and what it decides is checked directly.
@Suite struct ParentStateMachineTests {
    typealias Machine = ParentStateMachine
    let origin = ContinuousClock.now
    let interval = Duration.milliseconds(100)
    let first = WorkerID(bytes: [1])
    let second = WorkerID(bytes: [2])

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin + .milliseconds(milliseconds) }

    func worker(_ name: String, instance: String = "a", types: Set<String> = ["counter"], at time: Int = 0) -> Machine.Worker {
        .init(name: name, pool: "pool", instance: instance, hostedTypes: types, joinedAt: at(time))
    }

    /// A parent (liveness window 300 ms) with worker-1 joined on `first` at time 0, hosting
    /// `children`.
    func withOneWorker(hosting children: [UInt64] = []) -> Machine {
        var machine = Machine(configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, acknowledgementDeadline: .milliseconds(900)))
        #expect(machine.admit(name: "worker-1", instance: "a", from: first) == .join(replacing: nil))
        machine.join(first, as: worker("worker-1"))
        for child in children { machine.placed(child, on: first) }
        return machine
    }

    @Test("a joining worker becomes a placement candidate for the types it hosts, not for others, and not once it drains")
    func placementOnJoin() {
        var machine = withOneWorker()
        #expect(machine.candidates(hosting: "counter").map(\.name) == ["worker-1"])
        #expect(machine.candidates(hosting: "other").isEmpty)
        #expect(machine.worker(named: "worker-1", taking: "counter") == first)
        machine.placed(7, on: first)
        #expect(machine.candidates(hosting: "counter").first?.load == 1)
        _ = machine.drainRequested(by: first, placedThere: [7])
        #expect(machine.candidates(hosting: "counter").isEmpty)
        #expect(machine.worker(named: "worker-1", taking: "counter") == nil)
    }

    @Test("HELLO: repeated on its connection is welcomed again, renaming is refused, the same process on a new connection replaces the old")
    func helloAdmission() {
        let machine = withOneWorker()
        #expect(machine.admit(name: "worker-1", instance: "a", from: first) == .welcomeAgain)
        #expect(machine.admit(name: "worker-9", instance: "a", from: first) == .refuseRenaming(joinedAs: "worker-1"))
        #expect(machine.admit(name: "worker-1", instance: "a", from: second) == .join(replacing: first))
        #expect(machine.admit(name: "worker-2", instance: "b", from: second) == .join(replacing: nil))
    }

    @Test("HELLO from another process under a live worker's name: probe the old connection first, refuse while it is alive, join once it is gone")
    func helloNameTaken() {
        var machine = withOneWorker()
        #expect(machine.admit(name: "worker-1", instance: "b", from: second) == .probe(existing: first))
        #expect(machine.admit(name: "worker-1", instance: "b", from: second, probed: true) == .refuseNameTaken)
        _ = machine.workerLeft(first)
        #expect(machine.admit(name: "worker-1", instance: "b", from: second, probed: true) == .join(replacing: nil))
    }

    @Test("a worker is declared dead only once silent for longer than the liveness window; an idle link gets a heartbeat")
    func livenessWindow() {
        var machine = withOneWorker()
        #expect(machine.livenessAction(of: first, at: at(50)) == nil)
        #expect(machine.livenessAction(of: first, at: at(100)) == .sendHeartbeat(first))
        machine.sent(to: first, at: at(100))
        #expect(machine.livenessAction(of: first, at: at(150)) == nil)
        machine.heard(from: first, at: at(250))
        // 300 ms after it was last heard is still within the window; a moment later is not.
        machine.sent(to: first, at: at(500))
        #expect(machine.livenessAction(of: first, at: at(550)) == nil)
        #expect(machine.livenessAction(of: first, at: at(551)) == .declareDead(first, silence: .milliseconds(301)))
        #expect(machine.livenessAction(of: second, at: at(551)) == nil)
    }

    @Test("silence and an acknowledgement's wait count up to the parent's last poll: a stall of its own loop is not the worker's")
    func stallOfTheParentsLoop() {
        var machine = withOneWorker(hosting: [1, 2])
        machine.heard(from: first, at: at(250))
        machine.sent(to: first, at: at(250))
        machine.eventsSent(to: 2, at: at(250))
        // The loop polled at 300, then a job held it until 3,000: whatever the worker sent since
        // is unread, so neither its silence nor the events' wait has passed a deadline.
        #expect(machine.livenessAction(of: first, at: at(3000), listenedUntil: at(300)) == .sendHeartbeat(first))
        // Its next poll, at 3,000, read nothing from the worker: now it is silent.
        #expect(machine.livenessAction(of: first, at: at(3000), listenedUntil: at(3000)) == .declareDead(first, silence: .milliseconds(2750)))
        // It read a message of the worker's, but no acknowledgement: the events were lost.
        machine.heard(from: first, at: at(3000))
        #expect(machine.livenessAction(of: first, at: at(3000), listenedUntil: at(3000)) == .declareLost(first, childID: 2, waited: .milliseconds(2750)))
    }

    @Test("a dead worker's children fail (to be placed again), and the machine forgets it")
    func deadWorkerChildrenFail() {
        var machine = withOneWorker(hosting: [3, 1])
        let departure = machine.workerLeft(first)
        #expect(departure?.children.map(\.id) == [1, 3])
        #expect(departure?.children.allSatisfy { $0.after == .fail } == true)
        #expect(machine.workers.isEmpty)
        #expect(machine.workerLeft(first) == nil)
    }

    @Test("OUTPUTS numbers: in order per placement, a new epoch starts again, a gap is a loss, 0 is not checked")
    func outputsOrder() {
        var machine = withOneWorker()
        #expect(machine.outputsMessage(childID: 1, epoch: 1, number: 1) == .inOrder)
        #expect(machine.outputsMessage(childID: 1, epoch: 1, number: 2) == .inOrder)
        #expect(machine.outputsMessage(childID: 1, epoch: 1, number: 0) == .inOrder)
        #expect(machine.outputsMessage(childID: 1, epoch: 1, number: 5) == .lost(missing: 3...4))
        #expect(machine.outputsMessage(childID: 1, epoch: 2, number: 1) == .inOrder)
        #expect(machine.outputsMessage(childID: 1, epoch: 2, number: 3) == .lost(missing: 2...2))
        // A duplicate (the same number again) is a gap too: the numbering was lost.
        #expect(machine.outputsMessage(childID: 2, epoch: 1, number: 1) == .inOrder)
        #expect(machine.outputsMessage(childID: 2, epoch: 1, number: 1) == .lost(missing: 2...2))
    }

    @Test("events a live worker leaves unacknowledged past the deadline count as lost in transit; each acknowledgement restarts the wait")
    func unacknowledgedEventsAreLost() {
        var machine = withOneWorker(hosting: [1, 2])
        machine.eventsSent(to: 2, at: at(0))
        // Later sends do not restart the wait; an acknowledgement of some of them does.
        machine.eventsSent(to: 2, at: at(500))
        machine.acknowledged(2, coversAllSent: false, at: at(600))
        for time in stride(from: 100, through: 1500, by: 100) {
            machine.heard(from: first, at: at(time))
            machine.sent(to: first, at: at(time))
            #expect(machine.livenessAction(of: first, at: at(time)) == nil, "at \(time) ms")
        }
        machine.heard(from: first, at: at(1501))
        #expect(machine.livenessAction(of: first, at: at(1501)) == .declareLost(first, childID: 2, waited: .milliseconds(901)))
        // An acknowledgement of everything sent ends the wait; so does a new placement.
        machine.acknowledged(2, coversAllSent: true, at: at(1501))
        #expect(machine.livenessAction(of: first, at: at(1501)) == nil)
        machine.eventsSent(to: 1, at: at(1501))
        machine.placed(1, on: first)
        machine.heard(from: first, at: at(3000))
        machine.sent(to: first, at: at(3000))
        #expect(machine.livenessAction(of: first, at: at(3000)) == nil)
    }

    @Test("DRAIN releases the children placed there; repeated, it releases nothing more; the last final flush ends the drain")
    func drainHandover() {
        var machine = withOneWorker(hosting: [1, 2, 9])
        // Child 9's proxy moved on already: only 1 and 2 are still placed there.
        let request = machine.drainRequested(by: first, placedThere: [2, 1])
        #expect(request == .init(releases: [2, 1], drainedAlready: false))
        #expect(machine.drainRequested(by: first, placedThere: [2, 1]) == .init())
        #expect(machine.workers[first]?.children == [1, 2])
        #expect(machine.released(2, from: first, canMoveAtOnce: true) == false)
        #expect(machine.released(1, from: first, canMoveAtOnce: false) == true)
        #expect(machine.workers[first]?.drainMoved == 1)
        #expect(machine.workers[first]?.drainWaiting == 1)
        #expect(machine.workers[first]?.children.isEmpty == true)
    }

    @Test("DRAIN with no child there is drained at once")
    func drainWithNothing() {
        var machine = withOneWorker()
        #expect(machine.drainRequested(by: first, placedThere: []) == .init(releases: [], drainedAlready: true))
    }

    @Test(
        "a handed-over child is never failed, whatever order its final flush and its worker's connection close arrive in",
        arguments: [false, true])
    func handoverNeverUnavailable(closeFirst: Bool) {
        var machine = withOneWorker(hosting: [1, 2])
        _ = machine.drainRequested(by: first, placedThere: [1, 2])
        if !closeFirst { _ = machine.released(1, from: first, canMoveAtOnce: true) }
        let departure = machine.workerLeft(first)
        let expected: [(id: UInt64, after: Machine.ChildAfterDeparture)] = closeFirst ? [(1, .moveOn), (2, .moveOn)] : [(2, .moveOn)]
        #expect(departure?.children.elementsEqual(expected) { $0.id == $1.id && $0.after == $1.after } == true)
        // The final flush arriving after the close finds nobody: nothing more happens to the child.
        if closeFirst { #expect(machine.released(1, from: first, canMoveAtOnce: true) == false) }
    }

    @Test("a rebalance's release moves its child on if the worker leaves; the others fail; a stop ends the wait")
    func rebalanceRelease() {
        var machine = withOneWorker(hosting: [1, 2, 3])
        machine.releaseBegun(1, on: first)
        machine.releaseBegun(3, on: first)
        // Not draining: ending a release reports no drain.
        #expect(machine.unplaced(3, from: first) == false)
        let departure = machine.workerLeft(first)
        #expect(departure?.children.map(\.after) == [.moveOn, .fail])
    }
}
