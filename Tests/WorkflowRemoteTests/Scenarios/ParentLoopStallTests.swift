import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// A parent whose loop is held by one long job (a stopping coordinator sends every session's
/// STOPs in one) reads nothing meanwhile: real runtimes over ipc, the stall a job on the parent's
/// loop that blocks it for two and a half of its liveness windows.
@Suite struct ParentLoopStallTests {
    @Test("a parent whose loop stalled past its liveness window keeps the worker that kept sending heartbeats meanwhile")
    func stallIsNotTheWorkers() async throws {
        // The parent's window is 1 s (wide enough for a loaded machine's pauses of the worker's
        // thread); the worker's is 6 s, longer than the stall: it keeps its connection, and
        // heartbeats, throughout.
        let parent = try makeParent("stall-parent", liveness: 10)
        let worker = try makeWorker("stall-worker", parent: parent.listenEndpoint!, liveness: 60)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 1)]), loop: parent)
        try await rendering(of: host, "counter rendered remotely") { $0["a"]?.count == 0 }
        let joined = try #require(await parent.inspect().workers.first { $0.name == "stall-worker" }?.joinedAt)

        await withTaskExecutorPreference(parent) {
            // The stall itself (the fault this test injects), on the loop thread.
            Self.holdThisThread(seconds: 2.5)
        }
        let stallEnded = Date()
        // Until the parent has read the worker again after the stall (were it declared dead,
        // it would have joined again by then).
        try await eventually("the parent hears the worker after its stall") {
            guard let seen = await parent.inspect().workers.first(where: { $0.name == "stall-worker" }) else { return false }
            return Date().addingTimeInterval(-seen.secondsSinceHeard) > stallEnded
        }
        let after = try #require(await parent.inspect().workers.first { $0.name == "stall-worker" })
        #expect(after.joinedAt == joined, "the worker was never declared dead: the same connection, joined once")
        #expect(parent.statuses.values.allSatisfy { if case .running("stall-worker") = $0 { true } else { false } })
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// Blocks the calling thread: the loop's, when called from a task on the runtime.
    static func holdThisThread(seconds: Double) {
        Thread.sleep(forTimeInterval: seconds)
    }
}
