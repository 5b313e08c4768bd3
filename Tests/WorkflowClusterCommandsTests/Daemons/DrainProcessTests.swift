import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// Draining with the real daemons: SIGTERM on a worker hands its children over to another worker
/// of their pool before it leaves; a drain the coordinator cannot answer ends at
/// `drain.deadline_ms` and the worker still exits 0.
@Suite("Draining a worker")
struct DrainProcessTests {
    /// The inbox pane in a pool of two workers, the message pane on worker-2.
    static let poolPlacement: [ClusterFixture.Rule] = [
        ["match": "RemoteTestSupport.ListPaneWorkflow", "pool": "lists"],
        ["match": "RemoteTestSupport.DetailPaneWorkflow", "worker": "worker-2"],
    ]
    static let poolWorkers: [ClusterFixture.Rule] = [
        ["name": "worker-1", "pool": "lists"], ["name": "worker-2", "pool": "details"], ["name": "worker-3", "pool": "lists"],
    ]

    @Test("SIGTERM moves a worker's pane to another worker of its pool, never unavailable, and the worker exits 0")
    func drainMovesThePaneWithinItsPool() async throws {
        try await ClusterFixture.with("drain") { cluster in
            try cluster.writeConfig(placement: Self.poolPlacement, workers: Self.poolWorkers)
            let coordinator = try await cluster.startCoordinator()
            let worker1 = try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the inbox on worker-1", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            try await cluster.startWorker("worker-3")

            let (mark, logMark) = (coordinator.stdout.count, coordinator.stderr.count)
            #expect(try await worker1.terminate() == 0)
            #expect(worker1.stderr.lines.contains { $0.contains("drained: 1 children handed over") }, "\(worker1.stderr.lines)")
            #expect(
                worker1.stderr.lines.contains { $0.contains("stopped hosting") && $0.contains("epoch 1: handed over to the parent (drain)") },
                "\(worker1.stderr.lines)")
            try await coordinator.stderr.first("the coordinator to log the drain", from: logMark) {
                $0.contains("worker-1 draining: moving 1 children")
            }
            try await coordinator.stderr.first("the coordinator to log its end", from: logMark) {
                $0.contains("worker-1 drained: 1 children handed over, 0 of them waiting for a worker")
            }
            try await coordinator.stdout.first(
                "the inbox on worker-3", from: mark, where: ListDetailFrame.rendered(list: "worker-3", detail: "worker-2"))
            let unavailable = StatusLine.matching("ListPaneWorkflow", "unavailable")
            #expect(!coordinator.stdout.lines.dropFirst(mark).contains(where: unavailable), "the inbox was reported unavailable")
            // Operators see the handover counted (at the new placement, before worker-3 rendered).
            let gateway = try await GatewayClient.of(coordinator)
            let metrics = try await gateway.get("/metrics").text
            let handovers = metrics.split(separator: "\n").first { $0.hasPrefix("workflow_remote_handovers_total") }
            #expect(handovers?.split(separator: " ").last == "1", "\(handovers.map(String.init) ?? "absent") in:\n\(metrics)")
        }
    }

    @Test("a drain the coordinator does not answer (SIGSTOPped) ends at drain.deadline_ms; the worker exits 0")
    func drainEndsAtTheDeadline() async throws {
        try await ClusterFixture.with("drain-deadline") { cluster in
            // A 10 s liveness window: the stalled coordinator's silence must not end the drain
            // (by fencing) before its deadline.
            try cluster.writeConfig(
                placement: ClusterFixture.demoPlacement, heartbeat: ["interval_ms": 100, "liveness": 100], drain: ["deadline_ms": 300])
            let coordinator = try await cluster.startCoordinator()
            let worker1 = try await cluster.startWorker("worker-1")
            try await coordinator.stdout.first("the inbox running", where: StatusLine.matching("ListPaneWorkflow", "running"))

            kill(coordinator.pid, SIGSTOP)
            let status: Int32
            do {
                // SIGSTOP takes effect asynchronously: the coordinator must not read the DRAIN.
                try await withSafetyTimeout("the coordinator to stop") {
                    while !Self.isStopped(coordinator.pid) { try await Task.sleep(for: .milliseconds(5)) }
                }
                status = try await worker1.terminate()
            } catch {
                kill(coordinator.pid, SIGCONT)
                throw error
            }
            kill(coordinator.pid, SIGCONT)
            #expect(status == 0)
            #expect(
                worker1.stderr.lines.contains { $0.contains("drain deadline passed: 1 of 1 children not handed over") },
                "\(worker1.stderr.lines)")
            #expect(worker1.stderr.lines.contains { $0.contains("worker stopped") })
        }
    }

    /// Whether the kernel reports `pid` stopped (state `T` in /proc/PID/stat).
    static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else {
            return false
        }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).first == "T"
    }

    @Test("drain.deadline_ms: 5 s by default, 0 allowed (no drain), a negative value refused; the environment and the flag override it")
    func drainDeadlineSetting() async throws {
        let parser = ClusterConfigurationParser(file: "test.json")
        #expect(try parser.parse(Data(#"{"coordinator":{"endpoint":"ipc:///x"}}"#.utf8)).drainDeadline == .seconds(5))
        #expect(try parser.parse(Data(#"{"coordinator":{"endpoint":"ipc:///x"},"drain":{"deadline_ms":0}}"#.utf8)).drainDeadline == .zero)
        #expect(throws: ClusterConfigurationError.self) {
            try parser.parse(Data(#"{"coordinator":{"endpoint":"ipc:///x"},"drain":{"deadline_ms":-1}}"#.utf8))
        }
        #expect(throws: ClusterConfigurationError.self) {
            try parser.parse(Data(#"{"coordinator":{"endpoint":"ipc:///x"},"drain":{"timeout_ms":1}}"#.utf8))
        }

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-drain-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"coordinator":{"endpoint":"ipc:///file"},"drain":{"deadline_ms":2000}}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await ClusterSettings.load(file: file, environment: [:]).configuration.drainDeadline == .seconds(2))
        let environment = ["WORKFLOW_DRAIN_DEADLINE_MS": "750"]
        #expect(try await ClusterSettings.load(file: file, environment: environment).configuration.drainDeadline == .milliseconds(750))
        let flagged = try await ClusterSettings.load(
            file: file, overrides: ClusterOverrides([.drainDeadline: "0"]), environment: environment)
        #expect(flagged.configuration.drainDeadline == .zero)
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, overrides: ClusterOverrides([.drainDeadline: "soon"]), environment: [:])
        }
        // The daemon's graceful-shutdown bound leaves room for the drain.
        var configuration = ClusterConfiguration(coordinatorEndpoint: "ipc:///x")
        configuration.drainDeadline = .seconds(30)
        #expect(WorkerService.gracefulShutdownBound(for: configuration) > configuration.drainDeadline)
    }
}
