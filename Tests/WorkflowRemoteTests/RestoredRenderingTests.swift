import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// A parent restored from its snapshot shows each remote child's last rendering at once (status
/// `reconnecting`), not its placeholder, until the child's worker renders it; a tap on that
/// rendering is kept and applied once when the child runs again.
@Suite struct RestoredRenderingTests {
    @Test func aRestoredParentShowsTheLastRenderingAndAppliesItsTapOnceTheChildRuns() async throws {
        let parent = try makeParent("last-frame")
        let worker = try makeWorker("last-frame-worker", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)
        let board = CounterBoardWorkflow(counters: [.init(key: "kept", step: 1)])
        let host = WorkflowHost(workflow: board, loop: parent)
        let screen = try await rendering(of: host, "the counter") { $0["kept"]?.count == 0 }["kept"]!
        for _ in 0..<5 { screen.onIncrement.send(1) }
        let last = try await rendering(of: host, "5 taps applied") { $0["kept"]?.count == 5 }
        let snapshot = await host.snapshot()
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()

        // The restored parent waits for its pool's only member, which has not joined yet: the
        // child cannot run, as after a coordinator restart before its workers rejoined.
        var configuration = RemoteRuntimeConfiguration(name: "last-frame-restored")
        configuration.listenEndpoint = uniqueEndpoint("last-frame-restored")
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 5
        configuration.poolMembers = ["late": ["late-worker"]]
        configuration.placementGrace = .seconds(600)
        let restoredParent = try RemoteRuntime(configuration: configuration)
        let restoredBoard = CounterBoardWorkflow(counters: [.init(key: "kept", step: 1)], placement: .pool("late"))
        let restored = WorkflowHost(workflow: restoredBoard, snapshot: snapshot, loop: restoredParent)
        let first = try await rendering(of: restored, "the first rendering after the restore") { _ in true }
        #expect(first["kept"]?.count == last["kept"]?.count, "the first rendering shows the placeholder, not the last rendering")
        #expect(first["kept"]?.label == last["kept"]?.label)
        #expect(restoredParent.statuses.first { $0.key.hasSuffix("[kept]") }?.value == .reconnecting)

        // A tap on the restored rendering is taken (kept by the parent), not refused or dropped.
        #expect(first["kept"]!.onIncrement.send(1), "the restored rendering's sink refused the tap")
        let lateWorker = try makeWorker("late-worker", parent: restoredParent.listenEndpoint!, pool: "late")
        _ = try await status(of: restoredParent, pathSuffix: "[kept]") { $0 == .running(worker: "late-worker") }
        let tapped = try await rendering(of: restored, "the kept tap applied by the worker") { ($0["kept"]?.count ?? 0) >= 6 }
        #expect(tapped["kept"]?.count == 6, "the tap was applied \((tapped["kept"]?.count ?? 0) - 5) times")
        // Nothing else arrives late: one more tap makes exactly 7.
        tapped["kept"]!.onIncrement.send(1)
        let more = try await rendering(of: restored, "one more tap") { ($0["kept"]?.count ?? 0) >= 7 }
        #expect(more["kept"]?.count == 7)

        await restored.stop()
        await lateWorker.shutdown()
        await restoredParent.shutdown()
    }

    /// The last rendering travels in the node's snapshot; a snapshot written before it was kept
    /// still decodes (its child shows the placeholder until the worker renders it).
    @Test func theLastRenderingIsPartOfTheSnapshotState() throws {
        let state = RemoteWorkflow<CounterWorkflow>.State()
        state.restoredSnapshot = TreeSnapshot(workflowType: "Counter", state: Data("{}".utf8))
        state.restoredRendering = [1, 2, 3]
        let decoded = try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: JSONEncoder().encode(state))
        #expect(decoded.restoredRendering == [1, 2, 3])
        #expect(decoded.restoredSnapshot == state.restoredSnapshot)

        let older = Data(#"{"pendingEvents":[]}"#.utf8)
        #expect(try JSONDecoder().decode(RemoteWorkflow<CounterWorkflow>.State.self, from: older).restoredRendering == nil)
    }

    @Test func reconnectingIsNamedForLogsAndTheTree() {
        #expect(RemoteChildStatus.reconnecting.name == "reconnecting")
        #expect(RemoteChildStatus.reconnecting.description.contains("last rendering"))
    }
}
