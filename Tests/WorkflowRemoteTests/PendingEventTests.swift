import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// Events sent to a remote child and not acknowledged by its worker yet are part of the parent's
/// state: a parent restored from its snapshot sends them again, and a node whose placement
/// changes hands them to the new placement, so none is lost on the way.
@Suite struct PendingEventTests {
    /// A worker stops (SIGSTOP) with 50 events unacknowledged; the parent's snapshot is taken
    /// then, and a new parent restored from it starts the counter on another worker from the
    /// last acknowledged state *and* those 50 events.
    @Test func restoredParentSendsTheEventsItsSnapshotKept() async throws {
        let parent = try makeParent("pending-snapshot")
        let first = try WorkerProcess(name: "pending-first", connect: parent.listenEndpoint!)
        defer {
            first.resume()
            first.stop()
        }
        await parent.waitForWorkers(count: 1)
        let board = CounterBoardWorkflow(counters: [.init(key: "kept", step: 1)])
        let host = WorkflowHost(workflow: board, loop: parent)
        let screen = try await rendering(of: host, "the counter") { $0["kept"]?.count == 0 }["kept"]!
        for _ in 0..<50 { screen.onIncrement.send(1) }
        try await rendering(of: host, "50 events applied") { $0["kept"]?.count == 50 }

        first.suspend()
        try await eventually("the worker stopped") { first.isSuspended }
        for _ in 0..<50 { screen.onIncrement.send(1) }
        let snapshot = try await withSafetyTimeout("a snapshot with 50 events pending") { () -> TreeSnapshot in
            while true {
                let snapshot = await host.snapshot()
                if try Self.pendingEvents(in: snapshot, key: "kept") == 50 { return snapshot }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        await host.stop()
        await parent.shutdown()

        let restoredParent = try makeParent("pending-restored")
        let second = try WorkerProcess(name: "pending-second", connect: restoredParent.listenEndpoint!)
        defer { second.stop() }
        await restoredParent.waitForWorkers(count: 1)
        let restored = WorkflowHost(workflow: board, snapshot: snapshot, loop: restoredParent)
        let after = try await rendering(of: restored, "the restored counter with every event") { ($0["kept"]?.count ?? 0) >= 100 }
        #expect(after["kept"]?.count == 100)
        await restored.stop()
        await restoredParent.shutdown()
    }

    /// The counter's placement changes while its worker is stopped with 50 events
    /// unacknowledged: the new placement starts from the last acknowledged state and applies
    /// them, instead of starting from that state alone while the events wait on a stopped worker.
    @Test func newPlacementGetsTheEventsTheOldOneDidNotAcknowledge() async throws {
        let parent = try makeParent("pending-move")
        let old = try WorkerProcess(name: "pending-old", connect: parent.listenEndpoint!)
        let new = try WorkerProcess(name: "pending-new", connect: parent.listenEndpoint!)
        defer {
            old.resume()
            for worker in [old, new] { worker.stop() }
        }
        await parent.waitForWorkers(count: 2)
        let board = CounterBoardWorkflow(counters: [.init(key: "moved", step: 1)], placement: .worker("pending-old"))
        let host = WorkflowHost(workflow: board, loop: parent)
        let screen = try await rendering(of: host, "the counter") { $0["moved"]?.count == 0 }["moved"]!
        for _ in 0..<50 { screen.onIncrement.send(1) }
        try await rendering(of: host, "50 events applied") { $0["moved"]?.count == 50 }

        old.suspend()
        try await eventually("the old worker stopped") { old.isSuspended }
        for _ in 0..<50 { screen.onIncrement.send(1) }
        var moved = board
        moved.placement = .worker("pending-new")
        host.update(workflow: moved)
        let after = try await rendering(of: host, "the moved counter with every event") { ($0["moved"]?.count ?? 0) >= 100 }
        #expect(after["moved"]?.count == 100)
        _ = try await status(of: parent, pathSuffix: "[moved]") { $0 == .running(worker: "pending-new") }
        await host.stop()
        await parent.shutdown()
    }

    /// A snapshot written before pending events were kept (the child's snapshot alone) still
    /// restores the child's state.
    @Test func snapshotWithoutPendingEventsStillDecodes() throws {
        let child = TreeSnapshot(workflowType: "Counter", state: Data("{}".utf8))
        let old = try JSONEncoder().encode(child)
        let state = try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: old)
        #expect(state.restoredSnapshot == child)
        #expect(state.restoredEvents.isEmpty)
        let none = try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: Data("null".utf8))
        #expect(none.restoredSnapshot == nil)

        let current = RemoteWorkflow<CounterWorkflow>.State()
        current.restoredSnapshot = child
        current.restoredEvents = [PendingRemoteEvent(token: "1:0:Int@a.1", bytes: Data([1, 2]))]
        let decoded = try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: JSONEncoder().encode(current))
        #expect(decoded.restoredSnapshot == child)
        #expect(decoded.restoredEvents == current.restoredEvents)
    }

    /// How many pending events the snapshot keeps for the board's counter `key`.
    static func pendingEvents(in snapshot: TreeSnapshot, key: String) throws -> Int {
        guard let node = snapshot.children.first(where: { $0.key == key })?.snapshot, let state = node.state else { return 0 }
        return try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: state).restoredEvents.count
    }
}
