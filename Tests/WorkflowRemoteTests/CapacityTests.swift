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
    @Test("children placed on a worker at its capacity wait, typed, and the log says so once for the worker, not once per child")
    func childrenPastCapacityWaitAndAreSaidOnce() async throws {
        let log = CapturedLog()
        var parentConfiguration = RemoteRuntimeConfiguration(name: "capacity")
        parentConfiguration.listenEndpoint = uniqueEndpoint("capacity")
        parentConfiguration.heartbeatInterval = .milliseconds(100)
        parentConfiguration.heartbeatLiveness = 20
        parentConfiguration.logger = log.logger("capacity")
        let parent = try RemoteRuntime(configuration: parentConfiguration)
        var configuration = RemoteRuntimeConfiguration(name: "small")
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.registry = remoteTestRegistry
        configuration.capacity = 2
        let worker = try RemoteRuntime(configuration: configuration)
        await parent.waitForWorkers(count: 1)

        let keys = ["a", "b", "c", "d", "e"]
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: 1) }, placement: .worker("small")), loop: parent)
        for key in ["c", "d", "e"] {
            let status = try await status(of: parent, pathSuffix: "[\(key)]") { if case .unavailable = $0 { true } else { false } }
            #expect(status == .unavailable(.workerAtCapacity(worker: "small", capacity: 2)))
        }
        try await rendering(of: host, "the two within capacity run") { $0["a"]?.count == 0 && $0["b"]?.count == 0 }
        #expect(worker.workerCounters.started == 2)
        let warnings = log.text.components(separatedBy: "\n").filter { $0.hasPrefix("warning") }
        #expect(warnings.filter { $0.contains("small is at capacity") }.count == 1, "said once for the worker: \(warnings)")
        #expect(warnings.filter { $0.contains("child status") }.isEmpty, "no warning per child: \(warnings)")

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
