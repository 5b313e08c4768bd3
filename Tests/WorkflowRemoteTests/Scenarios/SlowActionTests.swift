import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// A remote child whose actions are slow behaves as a local one would: slowly, nothing else.
@Suite struct SlowActionTests {
    /// The worker sends nothing while a slice of the parent's messages runs. Were a slice ended
    /// only by its 256 events, at 2 ms per action that would be half a second of silence, longer
    /// than this parent's liveness window (100 ms × 4): the parent would declare the worker dead,
    /// move the child and replay its events, as slow on the next placement, forever (without the
    /// bound this test times out). A slice also ends after half a heartbeat interval
    /// (`LoopRoleDriver.handleSlice`), and the worker's flush keeps the parent hearing from it.
    @Test("a burst of slow actions that emit nothing (2 ms each, 256 of them outlast the parent's liveness window) keeps its placement: each event once, epoch 1")
    func slowActionsKeepTheirPlacement() async throws {
        let parent = try makeParent("slow-actions", liveness: 4)
        let worker = try makeWorker("slow-worker", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: SlowCounterParentWorkflow(actionMilliseconds: 2, placement: .worker("slow-worker")), loop: parent)
        let screen = try await rendering(of: host, "the slow counter") { $0.count == 0 }
        let events = 1_200
        for _ in 0..<events { #expect(screen.onIncrement.send(1)) }
        let final = try await rendering(of: host, "all \(events) events applied") { $0.count >= events }
        #expect(final.count == events, "each event applied once")
        let child = await parent.inspect().children.first { $0.path.hasSuffix("[slow]") || $0.path.hasSuffix("slow") }
        #expect(child?.epoch == 1, "the child was never moved (epoch \(String(describing: child?.epoch)))")
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
