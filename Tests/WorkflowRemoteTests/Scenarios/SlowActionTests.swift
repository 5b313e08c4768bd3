import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// A remote child whose actions are slow behaves as a local one would: slowly, nothing else.
@Suite struct SlowActionTests {
    /// The worker sends nothing while a slice of the parent's messages runs. Were a slice ended
    /// only by its 256 events, at 12 ms per action that would be three seconds of silence, longer
    /// than the liveness windows (100 ms × 20, the parent's of the worker and the worker's lease):
    /// the worker would be declared dead and fence itself, and the child would move and replay
    /// its events, as slow on the next placement (without the bound the child is moved, and the
    /// test fails or times out). A slice also ends after half a heartbeat interval
    /// (`WorkerStateMachine.sliceContinues`), and the worker's flush keeps the parent hearing from
    /// it. The window is the default's two seconds, so a loaded machine's stalls do not move the
    /// child either.
    @Test("a burst of slow actions that emit nothing (12 ms each, 256 of them outlast the liveness window) keeps its placement: each event once, epoch 1")
    func slowActionsKeepTheirPlacement() async throws {
        let parent = try makeParent("slow-actions")
        let worker = try makeWorker("slow-worker", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: SlowCounterParentWorkflow(actionMilliseconds: 12, placement: .worker("slow-worker")), loop: parent)
        let screen = try await rendering(of: host, "the slow counter") { $0.count == 0 }
        let events = 400
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
