import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowRemote

/// Sinks that cross processes keep the local rules: a sink from an earlier rendering applies its
/// own render pass's handler, and a placeholder's sinks refuse instead of swallowing events.
@Suite struct RemoteSinkTests {
    @Test func aStaleRemoteSinkAppliesItsOwnRowsActionOnTheWorker() async throws {
        let parent = try makeParent("stale-row")
        let worker = try makeWorker("stale-row-worker", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: RemoteRowListRoot(), loop: parent)
        let shown = try await rendering(of: host, "rows a, b, c from the worker") { $0.names == ["a", "b", "c"] }
        shown.rows[0].onDelete.send(Tap())
        try await rendering(of: host, "a deleted") { $0.names == ["b", "c"] }
        // The screen still shown lists a, b, c: its row b must select b, not the row now at b's
        // position (c).
        shown.rows[1].onSelect.send(Tap())
        let selected = try await rendering(of: host, "a selection") { !$0.selected.isEmpty }
        #expect(selected.selected == ["b"])
        // A stale delete acts on its own row too.
        shown.rows[2].onDelete.send(Tap())
        let deleted = try await rendering(of: host, "c deleted") { $0.names.count == 1 }
        #expect(deleted.names == ["b"])

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test func aPlaceholdersSinkRefusesEvents() async throws {
        let parent = try makeParent("placeholder-sink")
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "lonely", step: 1)]), loop: parent)
        _ = try await status(of: parent, pathSuffix: "[lonely]") { if case .unavailable = $0 { true } else { false } }
        let screen = try await rendering(of: host, "the placeholder") { $0["lonely"]?.count == -1 }["lonely"]!
        #expect(screen.onIncrement.send(1) == false, "no worker hosts the counter: the tap was not taken")

        await host.stop()
        await parent.shutdown()
    }

    @Test func aWorkerForwardsThePlaceholderOfItsOwnUnplacedChild() async throws {
        let parent = try makeParent("nested-placeholder")
        // The middle worker hosts `NestedWorkflow`, whose inner counter has no worker to run on.
        var configuration = RemoteRuntimeConfiguration(name: "middle")
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.listenEndpoint = uniqueEndpoint("nested-placeholder-middle")
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 5
        let middle = try RemoteRuntime(configuration: configuration)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: NestedRootWorkflow(step: 3), loop: parent)
        // Running means the middle's rendering reached the parent: it encoded, placeholder and all.
        _ = try await status(of: parent, pathSuffix: "[nested]") { if case .running = $0 { true } else { false } }
        let screen = try await rendering(of: host, "the middle's rendering") { $0.middleStep == 3 }
        #expect(screen.counter.count == -1, "the inner counter is still a placeholder")
        #expect(screen.counter.onIncrement.send(1) == false, "its inert sink refuses across two hops")

        await host.stop()
        await middle.shutdown()
        await parent.shutdown()
    }

    @Test func aRemotePlacementOnAPlainHostRendersLocallyAndWarnsOnce() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent, \.standardOutputContent]) {
            let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "here", step: 2)], placement: .anyWorker))
            host.rendering["here"]!.onIncrement.send(1)
            _ = try await rendering(of: host, "incremented locally") { $0["here"]?.count == 2 }
            host.rendering["here"]!.onIncrement.send(1)
            _ = try await rendering(of: host, "incremented again") { $0["here"]?.count == 4 }
            await host.stop()
        }
        let log = String(decoding: (result?.standardErrorContent ?? []) + (result?.standardOutputContent ?? []), as: UTF8.self)
        let warnings = log.components(separatedBy: "renders in this process").count - 1
        #expect(warnings == 1, "one warning for the child, not one per render pass:\n\(log)")
    }
}

/// Renders a `RowListWorkflow` of a, b, c on any worker.
struct RemoteRowListRoot: Workflow, Sendable {
    typealias State = Void
    func render(state: Void, context: RenderContext<RemoteRowListRoot>) -> RowListScreen {
        RowListWorkflow(rows: ["a", "b", "c"]).remote(on: .anyWorker).rendered(in: context, key: "rows")
    }
}
