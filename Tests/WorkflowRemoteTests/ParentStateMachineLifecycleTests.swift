import Testing
@testable import WorkflowRemote

/// A remote child's lifecycle as the parent machine decides it (`ParentStateMachine.Phase`):
/// START vs UPDATE, the epoch fencing of workers' messages, a handover whose worker leaves first,
/// a refusal waiting for new props or a joining worker. Checked without a proxy or a driver.
@Suite struct ParentStateMachineLifecycleTests {
    typealias Machine = ParentStateMachine
    let now = ContinuousClock.now
    let first = WorkerID(bytes: [1])
    let second = WorkerID(bytes: [2])

    /// A parent with worker-1 (on `first`) and worker-2 (on `second`) joined and child 7 registered.
    func machine() -> Machine {
        var machine = Machine(configuration: .init(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3, acknowledgementDeadline: .milliseconds(900)))
        for (id, name) in [(first, "worker-1"), (second, "worker-2")] {
            machine.join(id, as: .init(name: name, pool: "pool", instance: name, hostedTypes: ["counter"], joinedAt: now))
        }
        machine.childAdded(7)
        return machine
    }

    /// `propsRendered` for child 7, outside `#expect` (which cannot call a mutating method).
    func props(_ machine: inout Machine, changed: Bool) -> Machine.PropsAction {
        machine.propsRendered(7, changed: changed)
    }

    /// Places child 7 on `id` as the driver does when it sends START; returns the new epoch.
    func place(_ machine: inout Machine, on id: WorkerID) -> UInt64 {
        let epoch = machine.newPlacement(of: 7, snapshotThrough: 0).epoch
        machine.placed(7, on: id)
        return epoch
    }

    @Test("an unplaced child's props call for START, whether they changed or not; a placed child's for UPDATE only when they changed")
    func startVersusUpdate() {
        var machine = machine()
        #expect(machine.phase(of: 7) == .awaitingPlacement(movingFrom: nil))
        #expect(props(&machine, changed: false) == .start)
        #expect(props(&machine, changed: true) == .start)
        _ = place(&machine, on: first)
        #expect(machine.phase(of: 7) == .placed(on: first))
        #expect(props(&machine, changed: false) == .nothing)
        #expect(props(&machine, changed: true) == .update(on: first))
        // A stopped child is forgotten: nothing is sent for it any more.
        machine.forget(7)
        #expect(machine.phase(of: 7) == nil)
        #expect(props(&machine, changed: true) == .nothing)
    }

    @Test("a message from an earlier placement's epoch, or from another worker, is refused; the current placement's is taken")
    func epochFencing() {
        var machine = machine()
        let old = place(&machine, on: first)
        #expect(machine.accepts(from: first, about: 7, epoch: old))
        // The child fails and is placed again on the same worker: a new epoch.
        machine.childFailed(7, with: .workerUnavailable(worker: "worker-1", reason: "did not answer"))
        #expect(!machine.accepts(from: first, about: 7, epoch: old), "no placement now: nothing speaks for it")
        let current = place(&machine, on: first)
        #expect(current == old + 1)
        #expect(!machine.accepts(from: first, about: 7, epoch: old), "a flush of the earlier placement is stale")
        #expect(machine.accepts(from: first, about: 7, epoch: current))
        #expect(!machine.accepts(from: second, about: 7, epoch: current), "another worker does not speak for it")
        #expect(machine.eventTarget(of: 7).map { [$0.worker == first, $0.epoch == current] } == [true, true])
    }

    @Test("a child whose worker leaves during its release moves on from there and is never failed; its late final flush is stale")
    func releaseWhoseWorkerLeavesFirst() throws {
        var machine = machine()
        let epoch = place(&machine, on: first)
        machine.releaseBegun(7, on: first)
        #expect(machine.phase(of: 7) == .releasing(from: first))
        #expect(machine.isReleasing(7, from: first))
        // Meanwhile its events and new props wait for the next placement.
        #expect(machine.eventTarget(of: 7) == nil)
        #expect(props(&machine, changed: true) == .holdForNextPlacement)
        #expect(machine.accepts(from: first, about: 7, epoch: epoch), "the final flush is awaited from there")

        let left = machine.workerLeft(first)
        let departure = try #require(left)
        #expect(departure.children.map(\.id) == [7])
        #expect(departure.children.map(\.after) == [.moveOn])
        #expect(machine.phase(of: 7) == .awaitingPlacement(movingFrom: "worker-1"))
        #expect(!machine.accepts(from: first, about: 7, epoch: epoch))
        // No worker takes it at once: it waits as a move, not as a failure, and stays one.
        machine.childFailed(7, with: .workerDrained(worker: "worker-1", waitingFor: "a worker of pool pool"))
        #expect(machine.phase(of: 7)?.movingFrom == "worker-1")
        #expect(props(&machine, changed: false) == .start)
        _ = machine.newPlacement(of: 7, snapshotThrough: 0)
        let movedFrom = machine.placed(7, on: second)
        #expect(movedFrom == "worker-1", "its next START is a move")
        #expect(machine.phase(of: 7) == .placed(on: second))
    }

    @Test("a child placed elsewhere since is left alone by its old worker's departure")
    func departureOfAnOldHost() throws {
        var machine = machine()
        _ = place(&machine, on: first)
        // Placed again on the second worker while the first still counts it.
        _ = place(&machine, on: second)
        let left = machine.workerLeft(first)
        let departure = try #require(left)
        #expect(departure.children.isEmpty)
        #expect(machine.phase(of: 7) == .placed(on: second))
    }

    @Test("a completed release hands the child over: its next START is a move from the draining worker")
    func completedRelease() {
        var machine = machine()
        _ = place(&machine, on: first)
        let drain = machine.drainRequested(by: first, placedThere: [7])
        #expect(drain.releases == [7])
        #expect(machine.phase(of: 7) == .releasing(from: first))
        let drained = machine.released(7, from: first, canMoveAtOnce: true)
        #expect(drained, "its last child handed over ends the drain")
        #expect(machine.phase(of: 7) == .awaitingPlacement(movingFrom: "worker-1"))
        #expect(machine.host(of: 7) == nil)
    }

    @Test("refused props wait: not asked again until the props change or a worker joins")
    func refusalWaits() {
        var machine = machine()
        _ = place(&machine, on: first)
        machine.childFailed(7, with: .workerAtCapacity(worker: "worker-1", capacity: 1))
        #expect(machine.phase(of: 7) == .refused(movingFrom: nil))
        #expect(machine.host(of: 7) == nil)
        #expect(props(&machine, changed: false) == .nothing, "the same props would be refused again")
        #expect(props(&machine, changed: true) == .start, "new props are tried")
        #expect(machine.phase(of: 7) == .awaitingPlacement(movingFrom: nil))

        machine.childFailed(7, with: .unknownType("counter"))
        #expect(props(&machine, changed: false) == .nothing)
        // A worker that hosts its type joined: the refusal is forgotten and the node renders again.
        let retried = machine.retryPlacement(of: 7)
        #expect(retried)
        #expect(props(&machine, changed: false) == .start)
        // A placed child is not retried.
        _ = place(&machine, on: second)
        let retriedPlaced = machine.retryPlacement(of: 7)
        #expect(!retriedPlaced)
    }

    @Test("a HELLO is refused for a name longer than a routing id or no protocol version in common; otherwise the highest common version is agreed")
    func helloTerms() {
        let long = String(repeating: "w", count: WorkerPeer.maxNameBytes + 1)
        #expect(Machine.terms(ofHelloNaming: "w1", pool: "p", offering: [4, 5, 6], supported: 5...6) == .agreed(protocolVersion: 6))
        #expect(Machine.terms(ofHelloNaming: "w1", pool: "p", offering: [4, 5], supported: 5...6) == .agreed(protocolVersion: 5))
        guard case .nameTooLong(let reason) = Machine.terms(ofHelloNaming: long, pool: "p", offering: [6], supported: 5...6) else {
            Issue.record("a name too long was agreed")
            return
        }
        #expect(reason.contains("longer than"))
        guard case .nameTooLong(let versions) = Machine.terms(ofHelloNaming: "w1", pool: long, offering: [6], supported: 5...6),
            case .noCommonVersion(let noCommon) = Machine.terms(ofHelloNaming: "w1", pool: "p", offering: [3, 4], supported: 5...6)
        else {
            Issue.record("a pool name too long, or no common version, was agreed")
            return
        }
        #expect(versions.contains("longer than"))
        #expect(noCommon.contains("no common protocol version"))
    }
}
