import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// Hosts started together on one runtime (a coordinator creating sessions for many clients)
/// settle inside one another: their first passes wait for their workers once, and each still
/// publishes only a settled rendering.
@Suite struct StartsTogetherTests {
    @Test("eight hosts queued together start inside one another's settles, and each first rendering shows its remote child rendered by the worker")
    func hostsStartedTogetherSettleTogether() async throws {
        let parent = try makeParent("starts-together")
        let worker = try makeWorker("starts-together-w", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)

        // The loop is held while the starts queue, so it takes them all in one batch.
        let gate = DispatchSemaphore(value: 0)
        let held = Atomic(false)
        parent.execute {
            held.store(true, ordering: .sequentiallyConsistent)
            gate.wait()
        }
        try await eventually("the loop held") { held.load(ordering: .sequentiallyConsistent) }
        let hosts = Task {
            await withTaskGroup(of: WorkflowHost<CounterBoardWorkflow>.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        await parent.runStart {
                            WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c\(index)", step: 1)]), loop: parent)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await eventually("the eight starts queued") { parent.queuedJobs >= 8 }
        gate.signal()
        let started = await hosts.value

        #expect(started.count == 8)
        for host in started {
            let screens = host.rendering
            #expect(screens.count == 1)
            #expect(screens.values.allSatisfy { $0.count == 0 }, "a first rendering showed a placeholder: \(screens.values.map(\.count))")
        }
        #expect(await parent.startsRunInSettles() == 7, "each start after the first ran inside the settle before it")

        // They are hosts like any other: an event reaches its own child.
        let first = started[0]
        let key = first.rendering.keys.first!
        first.rendering[key]!.onIncrement.send(1)
        try await rendering(of: first, "the first host's counter at 1") { $0[key]?.count == 1 }

        for host in started { await host.stop() }
        await worker.shutdown()
        await parent.shutdown()
    }
}
