import Foundation
import Testing
import RemoteTestSupport
import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// Trees that span real processes: the test's host and `remote-test-worker` processes.
@Suite struct CrossProcessTests {
    /// A list and a detail pane on a worker process render, pass for pass, what the same tree
    /// renders fully locally, and picking through the list's sink (an event that crosses back to
    /// the worker) changes the detail pane.
    @Test func listDetailSplitAcrossProcessesMatchesLocal() async throws {
        let parent = try makeParent("panes")
        let worker = try WorkerProcess(name: "panes-worker", connect: parent.listenEndpoint!)
        defer { worker.stop() }
        await parent.waitForWorkers(count: 1)

        let ids = [11, 12, 13, 14]
        let remote = WorkflowHost(
            workflow: ListDetailWorkflow(ids: ids, listPlacement: .anyWorker, detailPlacement: .anyWorker), loop: parent)
        let local = WorkflowHost(workflow: ListDetailWorkflow(ids: ids, listPlacement: .local, detailPlacement: .local))

        let workerLabel = "pid \(worker.process.processIdentifier)"
        var remoteScreen = try await rendering(of: remote, "first remote rendering") { $0.list.renderedBy == workerLabel }
        #expect(remoteScreen.detail.renderedBy == workerLabel)
        #expect(Comparable(remoteScreen) == Comparable(local.rendering))

        for selection in [13, 11, 14] {
            remoteScreen.list.onPick.send(selection)
            local.rendering.list.onPick.send(selection)
            remoteScreen = try await rendering(of: remote, "\(selection) picked remotely") { $0.detail.id == selection }
            let localScreen = try await rendering(of: local, "\(selection) picked locally") { $0.detail.id == selection }
            #expect(Comparable(remoteScreen) == Comparable(localScreen))
            #expect(remoteScreen.detail.renderedBy == workerLabel)
        }
        #expect(parent.statuses.values.allSatisfy { $0 == .running(worker: "panes-worker") })

        await remote.stop()
        await local.stop()
        await parent.shutdown()
    }

    /// A remote child that renders a remote child of its own: the test process hosts the root,
    /// worker A hosts `NestedWorkflow`, worker B (connected to A) hosts the inner counter.
    /// Renderings flow up two hops, events down two hops, outputs up two hops.
    @Test func nestedTreeSpansThreeProcesses() async throws {
        let parent = try makeParent("nested")
        let middleEndpoint = uniqueEndpoint("nested-middle")
        let middle = try WorkerProcess(name: "middle", connect: parent.listenEndpoint!, listen: middleEndpoint)
        defer { middle.stop() }
        await parent.waitForWorkers(count: 1)
        let leaf = try WorkerProcess(name: "leaf", connect: middleEndpoint)
        defer { leaf.stop() }

        let host = WorkflowHost(workflow: NestedRootWorkflow(step: 3), loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the inner counter's first rendering") { $0.counter.count == 0 }
        #expect(screen.middleStep == 3)

        screen.counter.onIncrement.send(2)
        let updated = try await rendering(of: host, "the incremented count") { $0.counter.count == 6 }
        #expect(updated.counter.step == 3)
        let first = try await withSafetyTimeout("the output") { () -> Int? in
            for await output in outputs { return output }
            return nil
        }
        #expect(first == 6)

        host.update(workflow: NestedRootWorkflow(step: 5))
        let changed = try await rendering(of: host, "new props through two hops") { $0.counter.step == 5 && $0.middleStep == 5 }
        #expect(changed.counter.count == 6, "the inner counter kept its state")

        await host.stop()
        await parent.shutdown()
    }
}

/// The root of the three-process test: renders `NestedWorkflow` on a worker.
struct NestedRootWorkflow: Workflow, Sendable {
    var step: Int
    typealias State = Void
    typealias Output = Int

    func render(state: Void, context: RenderContext<NestedRootWorkflow>) -> NestedScreen {
        NestedWorkflow(step: step).remote(on: .worker("middle")).rendered(in: context, key: "nested")
    }
}

/// The parts of a list-detail screen that must match between a remote and a local run
/// (everything but the process labels).
struct Comparable: Equatable {
    let ids: [Int]
    let picked: Int?

    init(_ screen: ListDetailScreen) {
        ids = screen.list.ids
        picked = screen.detail.id
    }
}
