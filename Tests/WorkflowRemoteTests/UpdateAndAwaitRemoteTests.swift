import RemoteTestSupport
import Testing
import Workflow
import WorkflowRemote

/// `WorkflowHost.updateAndAwaitRendering` on a remote runtime: the rendering handed back is the
/// settled one, with the remote child's answer to the new props already in it.
@Suite struct UpdateAndAwaitRemoteTests {
    @Test func returnsTheWorkersRenderingOfTheNewProps() async throws {
        let parent = try makeParent("update-await")
        let worker = try makeWorker("update-await-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 0)]), loop: parent)
        try await rendering(of: host, "counter rendered remotely") { $0["a"]?.count == 0 }
        for step in 1...50 {
            let screens = try #require(await host.updateAndAwaitRendering(
                workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: step)])))
            // The step is rendered by the worker from the props it was sent: the proxy's own
            // rendering until the worker answers would still show the previous step.
            let screen = try #require(screens["a"])
            #expect(screen.step == step, "the worker's rendering for these props is in the answer")
            #expect(screen.count == 0)
        }
        #expect(worker.workerCounters.updated == 50)
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// The round trip's receive and send paths reuse their buffers, envelope and coders from one
    /// message to the next: two children updated in turn each get their own props and answer
    /// with their own rendering, and neither process reads a message that is not there (a
    /// receive that found nothing once passed for an empty message: the worker spun, logging
    /// malformed messages and taking each for a sign of its parent's life).
    @Test func reusedBuffersKeepEveryMessageApart() async throws {
        let log = CapturedLog()
        var parentConfiguration = RemoteRuntimeConfiguration(name: "reuse")
        parentConfiguration.listenEndpoint = uniqueEndpoint("reuse")
        parentConfiguration.logger = log.logger("reuse")
        let parent = try RemoteRuntime(configuration: parentConfiguration)
        var workerConfiguration = RemoteRuntimeConfiguration(name: "reuse-worker")
        workerConfiguration.parentEndpoint = parent.listenEndpoint
        workerConfiguration.registry = remoteTestRegistry
        workerConfiguration.logger = log.logger("reuse-worker")
        let worker = try RemoteRuntime(configuration: workerConfiguration)
        await parent.waitForWorkers(count: 1)
        func board(_ a: Int, _ b: Int) -> CounterBoardWorkflow {
            CounterBoardWorkflow(counters: [.init(key: "a", step: a), .init(key: "b", step: b)])
        }
        let host = WorkflowHost(workflow: board(0, 0), loop: parent)
        try await rendering(of: host, "both counters rendered remotely") { $0["a"]?.count == 0 && $0["b"]?.count == 0 }
        for round in 1...40 {
            // One child's props change per round, alternating: messages about the two children
            // (different node paths) follow each other through the same buffers.
            let (a, b) = round.isMultiple(of: 2) ? (round, round - 1) : (round - 1, round)
            let screens = try #require(await host.updateAndAwaitRendering(workflow: board(a, b)))
            #expect(screens["a"]?.step == a && screens["a"]?.label == "a")
            #expect(screens["b"]?.step == b && screens["b"]?.label == "b")
        }
        #expect(worker.workerCounters.updated == 40)
        #expect(worker.workerCounters.errors == 0)
        #expect(!log.text.contains("malformed"), "no message was read that was not sent")
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test func newRemoteChildrenAreAnsweredWithTheirFirstRenderingNotTheirPlaceholder() async throws {
        let parent = try makeParent("update-await-start")
        let worker = try makeWorker("update-await-start-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: []), loop: parent)
        for round in 1...5 {
            let keys = (1...round).map { "r\(round)-\($0)" }
            let screens = try #require(await host.updateAndAwaitRendering(
                workflow: CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: round) })))
            #expect(screens.keys.sorted() == keys.sorted(), "the previous round's children are gone")
            for key in keys {
                let screen = try #require(screens[key])
                // A placeholder has count -1: a pass showing one is never published.
                #expect(screen.count == 0, "\(key) is the worker's rendering, not the placeholder")
                #expect(screen.step == round)
                #expect(screen.label == key)
            }
        }
        #expect(worker.workerCounters.started == 15)
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
