import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// Renders one remote ledger (the running build's type) where `placement` says.
struct PlacedLedgerHolder: Workflow, Sendable {
    typealias State = Void
    var placement: RemotePlacement

    func render(state: Void, context: RenderContext<PlacedLedgerHolder>) -> LedgerScreen {
        LedgerWorkflow().remote(on: placement).rendered(in: context, key: "l")
    }
}

/// A remote child whose state a newer build wrote is never started on a worker of an older build
/// (which announced an older state version of its type): it waits, its state kept, and runs as
/// soon as a worker that reads its version joins.
@Suite struct StateVersionWaitTests {
    static let nextBuild = RemotableRegistry().registering(LedgerWorkflowNext.self)
    static let runningBuild = RemotableRegistry().registering(LedgerWorkflow.self)

    @Test("a child of state version 2 waits, unavailable(noWorkerReadsState), beside a worker of version 1, then runs with its state on a worker of version 2")
    func waitsForAReader() async throws {
        let parent = try makeParent("state-version-wait")
        let old = try makeWorker("sv-old", parent: parent.listenEndpoint!, registry: Self.runningBuild, pool: "p")
        let first = try makeWorker("sv-next-1", parent: parent.listenEndpoint!, registry: Self.nextBuild, pool: "q")
        await parent.waitForWorkers(count: 2)

        // The ledger runs on the next build (pool q), which writes state version 2.
        let writer = WorkflowHost(workflow: PlacedLedgerHolder(placement: .pool("q")), loop: parent)
        let screen = try await rendering(of: writer, "the ledger on the next build") { $0.stateVersion == 2 && $0.count == 0 }
        screen.record.send(1)
        screen.record.send(2)
        try await rendering(of: writer, "both events applied") { $0.count == 2 }
        let snapshot = await writer.snapshot()
        await writer.stop()

        // Restored where only the running build is (pool p): not started there.
        let restored = WorkflowHost(workflow: PlacedLedgerHolder(placement: .pool("p")), snapshot: snapshot, loop: parent)
        let waiting = try await status(of: parent, pathSuffix: "[l]", where: { if case .unavailable = $0 { true } else { false } })
        guard case .unavailable(.noWorkerReadsState(let type, let version, let placement)) = waiting else {
            Issue.record("expected noWorkerReadsState, got \(waiting)")
            return
        }
        #expect(type == LedgerWorkflowNext.stableTypeName)
        #expect(version == 2)
        #expect(placement.contains("p"), "\(placement)")

        // A worker of the next build joins pool p: the ledger runs there, from its state.
        let second = try makeWorker("sv-next-2", parent: parent.listenEndpoint!, registry: Self.nextBuild, pool: "p")
        let running = try await status(of: parent, pathSuffix: "[l]", where: { if case .running = $0 { true } else { false } })
        #expect(running == .running(worker: "sv-next-2"))
        // Its worker applies a third event on top of the two it was started with.
        restored.rendering.record.send(3)
        let resumed = try await rendering(of: restored, "the third event applied") { $0.count == 3 || $0.count == 1 }
        #expect(resumed.count == 3, "the ledger must keep its two events, not restart empty")

        await restored.stop()
        for worker in [old, first, second] { await worker.shutdown() }
        await parent.shutdown()
    }
}
