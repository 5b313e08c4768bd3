import Foundation
import Testing
import RemoteTestSupport
import WireProtocol
import Workflow
import WorkflowRemote
import ZeroMQ

/// A worker refuses children past its capacity with a typed error, and the parent does not keep
/// asking it again on every render.
@Suite struct CapacityTests {
    @Test func workerRefusesChildrenPastItsCapacity() async throws {
        let parent = try makeParent("capacity")
        var configuration = RemoteRuntimeConfiguration(name: "small")
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.registry = remoteTestRegistry
        configuration.capacity = 2
        let worker = try RemoteRuntime(configuration: configuration)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: ["a", "b", "c"].map { .init(key: $0, step: 1) }, placement: .worker("small")), loop: parent)
        let status = try await status(of: parent, pathSuffix: "[c]") { if case .unavailable = $0 { true } else { false } }
        guard case .unavailable(.refused(let reason)) = status else {
            Issue.record("expected a refusal, got \(status)")
            return
        }
        #expect(reason.contains("capacity"))
        try await rendering(of: host, "the two within capacity run") { $0["a"]?.count == 0 && $0["b"]?.count == 0 }
        #expect(worker.workerCounters.started == 2)

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
