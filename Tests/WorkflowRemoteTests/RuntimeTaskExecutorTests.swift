import RemoteTestSupport
import Testing
import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// A task may run on a `RemoteRuntime` as its `TaskExecutor` (the loop thread), so its updates
/// start and its renderings resume it without a thread hand-off. These check that such a task
/// sees the same renderings as one on the cooperative pool, that the loop still serves everyone
/// else while the task runs on it, and that the task keeps running once the loop has ended.
@Suite struct RuntimeTaskExecutorTests {
    @Test func aTaskOnTheRuntimeUpdatesAndAwaitsRemoteRenderingsOnTheLoop() async throws {
        let parent = try makeParent("executor-remote")
        let worker = try makeWorker("executor-remote-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: 0)]), loop: parent)
        try await rendering(of: host, "counter rendered remotely") { $0["a"]?.count == 0 }
        try await withSafetyTimeout("updates on the runtime's executor") {
            try await withTaskExecutorPreference(parent) {
                #expect(parent.inLoop, "the task runs on the loop thread")
                for step in 1...50 {
                    let screens = try #require(await host.updateAndAwaitRendering(
                        workflow: CounterBoardWorkflow(counters: [.init(key: "a", step: step)])))
                    #expect(parent.inLoop, "the rendering resumed the task on the loop thread")
                    let screen = try #require(screens["a"])
                    #expect(screen.step == step, "the worker's rendering for these props is in the answer")
                    #expect(screen.count == 0)
                }
                // An event sent from the loop thread through the remote child's sink reaches the
                // worker once, and its rendering comes back to a stream read on the loop.
                let screen = try #require(host.rendering["a"])
                #expect(screen.onIncrement.send(1))
                for await screens in host.renderings where screens["a"]?.count == 50 { break }
                #expect(parent.inLoop)
            }
        }
        #expect(host.rendering["a"]?.count == 50, "the event was applied once")
        #expect(worker.workerCounters.updated == 50)
        #expect(worker.workerCounters.events == 1)
        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// The loop is busy with another task's round trips (queued from the pool, each woken
    /// through the loop's wakeup) while this one runs on it: each gets the rendering of its own
    /// props, and neither waits on the other for ever.
    @Test func tasksOnTheLoopAndOnThePoolShareTheRuntime() async throws {
        let parent = try makeParent("executor-shared")
        let worker = try makeWorker("executor-shared-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let onLoop = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "l", step: 0)]), loop: parent)
        let onPool = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "p", step: 0)]), loop: parent)
        try await rendering(of: onLoop, "the loop task's counter") { $0["l"]?.count == 0 }
        try await rendering(of: onPool, "the pool task's counter") { $0["p"]?.count == 0 }
        try await withSafetyTimeout("both tasks' round trips") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(executorPreference: parent) {
                    for step in 1...40 {
                        let screens = try #require(await onLoop.updateAndAwaitRendering(
                            workflow: CounterBoardWorkflow(counters: [.init(key: "l", step: step)])))
                        #expect(screens["l"]?.step == step)
                        #expect(parent.inLoop)
                    }
                }
                group.addTask {
                    for step in 1...40 {
                        let screens = try #require(await onPool.updateAndAwaitRendering(
                            workflow: CounterBoardWorkflow(counters: [.init(key: "p", step: step)])))
                        #expect(screens["p"]?.step == step)
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(worker.workerCounters.updated == 80)
        await onLoop.stop()
        await onPool.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// A task on the runtime's executor shuts the runtime down and goes on: its later jobs run
    /// on the global executor, and a host still on the runtime answers its updates there (on the
    /// calling thread, as after any shutdown).
    @Test func aTaskOnTheRuntimeOutlivesItsLoop() async throws {
        let runtime = try makeParent("executor-end")
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "x", step: 1)], placement: .local), loop: runtime)
        try await withSafetyTimeout("a task outliving its loop") {
            try await withTaskExecutorPreference(runtime) {
                // Local children: the update is applied and rendered by the loop, inside the
                // same loop iteration as the task's own job, without deadlock.
                let first = try #require(await host.updateAndAwaitRendering(
                    workflow: CounterBoardWorkflow(counters: [.init(key: "x", step: 2)], placement: .local)))
                #expect(first["x"]?.step == 2)
                #expect(runtime.inLoop)
                await runtime.shutdown()
                // The loop's thread has ended: the task's next jobs run on the global executor.
                await Task.yield()
                let later = try #require(await host.updateAndAwaitRendering(
                    workflow: CounterBoardWorkflow(counters: [.init(key: "x", step: 3)], placement: .local)))
                #expect(later["x"]?.step == 3)
                await host.stop()
            }
        }
    }
}
