import Testing
import RemoteTestSupport
import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// Keyed lifecycle across processes: START on first render, UPDATE on new props, STOP on absence.
@Suite struct RemoteLifecycleTests {
    @Test func startUpdateStopFollowKeys() async throws {
        let parent = try makeParent("lifecycle")
        let worker = try makeWorker("lifecycle-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 1), .init(key: "b", step: 1)]), loop: parent)
        try await rendering(of: host, "both counters rendered remotely") { $0["a"]?.count == 0 && $0["b"]?.count == 0 }
        #expect(worker.workerCounters.started == 2)

        host.update(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 5), .init(key: "b", step: 1)]))
        try await rendering(of: host, "a's new props") { $0["a"]?.step == 5 }
        #expect(worker.workerCounters.updated == 1)

        host.update(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 5)]))
        try await rendering(of: host, "b gone") { $0["b"] == nil }
        try await eventually("b stopped on the worker") { worker.workerCounters.stopped == 1 }
        #expect(worker.workerCounters.stopped == 1)
        #expect(worker.workerCounters.started == 2)

        // Same key back: a new identity instance, started again with fresh state.
        host.update(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 5), .init(key: "b", step: 2)]))
        try await rendering(of: host, "b back") { $0["b"]?.step == 2 && $0["b"]?.count == 0 }
        #expect(worker.workerCounters.started == 3)

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// A parent shutting down with children placed sends their STOPs last: they must leave
    /// before its sockets close, or the worker keeps the children until the parent's silence
    /// (here a minute) tells it.
    @Test func parentShutdownStopsItsChildrenOnTheWorker() async throws {
        let parent = try makeParent("shutdown-stops")
        // Heartbeats as often as the parent expects them (its window is 0.5 s: a worker beating
        // once a second was taken for dead whenever the test took that long, and got no STOPs).
        let worker = try makeWorker(
            "shutdown-stops-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry, heartbeat: .milliseconds(100), liveness: 6_000)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 1), .init(key: "b", step: 1)]), loop: parent)
        try await rendering(of: host, "both counters rendered remotely") { $0["a"]?.count == 0 && $0["b"]?.count == 0 }
        #expect(worker.workerCounters.stopped == 0)

        // The host is not stopped first (that would send the STOPs while the loop runs on):
        // the runtime's own shutdown must stop the children it placed. The worker's silence
        // window (600 s) is far beyond the wait: only the STOPs can stop the children in time.
        await parent.shutdown()
        try await eventually("both children stopped on the worker by the parent's STOPs") { worker.workerCounters.stopped == 2 }
        await worker.shutdown()
        withExtendedLifetime(host) {}
    }

    /// A host still running on a runtime that shut down keeps answering on the caller's thread:
    /// an update is rendered (its remote children unavailable, no worker to place them on) and
    /// `stop()` returns, instead of waiting forever for the loop.
    @Test func hostKeepsAnsweringAfterItsRuntimeShutDown() async throws {
        let parent = try makeParent("after-shutdown")
        let worker = try makeWorker("after-shutdown-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 1)]), loop: parent)
        try await rendering(of: host, "rendered remotely") { $0["a"]?.count == 0 }
        await parent.shutdown()

        let updated = try await withSafetyTimeout("an update after the shutdown") {
            await host.updateAndAwaitRendering(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 1), .init(key: "b", step: 1)]))
        }
        #expect(updated.map { Set($0.keys) } == ["a", "b"], "the update was rendered")
        #expect(parent.statuses.values.allSatisfy { if case .unavailable = $0 { true } else { false } }, "\(parent.statuses)")

        try await withSafetyTimeout("stop after the shutdown") { await host.stop() }
        await worker.shutdown()
    }

    @Test func staleRemoteSinkIsDropped() async throws {
        let parent = try makeParent("stale")
        let worker = try makeWorker("stale-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "gone", step: 1)]), loop: parent)
        let screen = try await rendering(of: host, "counter") { $0["gone"]?.count == 0 }["gone"]!
        host.update(workflow: CounterBoardWorkflow(counters: []))
        try await rendering(of: host, "counter removed") { $0.isEmpty }
        try await eventually("stopped on the worker") { worker.workerCounters.stopped == 1 }

        // The parent's loop handles the stale event before anything sent after it: it is dropped.
        screen.onIncrement.send(1)
        host.update(workflow: CounterBoardWorkflow(counters: [.init(key: "new", step: 1)]))
        let fresh = try await rendering(of: host, "new counter") { $0["new"]?.count == 0 }["new"]!
        fresh.onIncrement.send(1)
        try await rendering(of: host, "new counter incremented") { $0["new"]?.count == 1 }
        #expect(worker.workerCounters.events == 1, "only the fresh counter's event was applied")

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test func thousandEventsAppliedOnceInOrder() async throws {
        let parent = try makeParent("thousand")
        let worker = try makeWorker("thousand-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "counter") { $0["c"]?.count == 0 }["c"]!
        for _ in 0..<1000 { screen.onIncrement.send(1) }
        let seen = try await withSafetyTimeout("1,000 outputs") {
            var seen: [Int] = []
            for await output in outputs {
                seen.append(output.count)
                if seen.count == 1000 { break }
            }
            return seen
        }
        #expect(seen == Array(1...1000))
        try await rendering(of: host, "final count") { $0["c"]?.count == 1000 }
        #expect(worker.workerCounters.events == 1000)

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
