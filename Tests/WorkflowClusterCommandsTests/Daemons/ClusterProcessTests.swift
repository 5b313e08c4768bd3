import ClusterTestSupport
import RemoteTestSupport
import Foundation
import Testing
import WireProtocol
import WorkflowCluster
import ZeroMQ
import WorkflowClusterTesting

/// The real daemons, as separate processes: a coordinator and two workers on a unique endpoint.
@Suite("Cluster daemons")
struct ClusterProcessTests {
    @Test("the demo tree renders across three processes, placed as configured")
    func demoTreeRenders() async throws {
        try await ClusterFixture.with("demo") { cluster in
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("inbox on worker-1, message on worker-2", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            try await coordinator.stdout.first("the inbox running on worker-1", where: StatusLine.matching("ListPaneWorkflow", "running"))
        }
    }

    @Test("the scripted demo drives selections, prints each rendering and exits 0")
    func scriptedDemo() async throws {
        try await ClusterFixture.with("script") { cluster in
            let workers = [try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-1"], label: "worker-1"),
                           try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-2"], label: "worker-2")]
            let demo = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath, "--picks", "3,1", "--print-renderings", "json"], label: "demo")
            #expect(try await demo.waitForExit() == 0)
            let frames = demo.stdout.lines.compactMap(ListDetailFrame.parse)
            #expect(frames.contains { $0.detail.id == 3 && $0.detail.renderedBy == "worker-2" })
            #expect(frames.last?.detail.id == 1)
            for worker in workers { #expect(try await worker.terminate() == 0) }
        }
    }

    @Test("the coordinator and a worker exit 0 on SIGTERM, the worker telling the coordinator it leaves")
    func cleanExitOnSIGTERM() async throws {
        try await ClusterFixture.with("sigterm") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let worker = try await cluster.startWorker("worker-1")
            #expect(try await worker.terminate() == 0)
            #expect(worker.stderr.lines.contains { $0.contains("worker leaving") })
            // Usually "worker left: worker-1 left (it said goodbye)" (the GOODBYE); a heartbeat sent to the closing socket
            // can report it unreachable first, so accept any departure of worker-1.
            try await coordinator.stderr.first("the coordinator to log the departure") { $0.contains("worker left") && $0.contains("worker-1") }
            #expect(try await coordinator.terminate() == 0)
            try await coordinator.stderr.first("the coordinator to log its stop") { $0.contains("coordinator stopped") }
            // A clean stop, gateway included, logs nothing at `error` on either side.
            for daemon in [coordinator, worker] {
                let errors = daemon.stderr.lines.filter { $0.contains(" error ") }
                #expect(errors.isEmpty, "\(daemon.label) logged errors on a clean SIGTERM: \(errors)")
            }
        }
    }

    @Test("changing the placement in the file moves the children on restart")
    func placementChangeMovesChildren() async throws {
        try await ClusterFixture.with("move") { cluster in
            var coordinator = try await cluster.startCoordinator()
            var workers = [try await cluster.startWorker("worker-1"), try await cluster.startWorker("worker-2")]
            try await coordinator.stdout.first("the configured placement", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            #expect(try await coordinator.terminate() == 0)
            for worker in workers { #expect(try await worker.terminate() == 0) }

            try cluster.writeConfig(placement: [
                ["match": "*ListPaneWorkflow", "worker": "worker-2"],
                ["match": "RemoteTestSupport.DetailPaneWorkflow", "pool": "lists"],
            ])
            coordinator = try await cluster.startCoordinator()
            workers = [try await cluster.startWorker("worker-1"), try await cluster.startWorker("worker-2")]
            try await coordinator.stdout.first("the changed placement", where: ListDetailFrame.rendered(list: "worker-2", detail: "worker-1"))
        }
    }

    @Test("running workers rejoin a restarted coordinator, which places children by its new file")
    func workersRejoinRestartedCoordinator() async throws {
        try await ClusterFixture.with("restart") { cluster in
            var coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the configured placement", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            #expect(try await coordinator.terminate() == 0)

            try cluster.writeConfig(placement: [
                ["match": "RemoteTestSupport.ListPaneWorkflow", "worker": "worker-2"],
                ["match": "RemoteTestSupport.DetailPaneWorkflow", "worker": "worker-1"],
            ])
            coordinator = try await cluster.startCoordinator()
            try await coordinator.stdout.first("the moved panes", where: ListDetailFrame.rendered(list: "worker-2", detail: "worker-1"))
        }
    }

    @Test("a worker stopped with SIGTERM makes its child unavailable; restarted, it takes the child back")
    func workerLeavesAndRejoins() async throws {
        try await ClusterFixture.with("rejoin") { cluster in
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            let worker2 = try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the demo placement", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))

            let mark = coordinator.stdout.count
            #expect(try await worker2.terminate() == 0)
            try await worker2.stderr.first("worker-2 to say it leaves") { $0.contains("worker leaving") }
            try await coordinator.stdout.first("the message pane unavailable", from: mark, where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
            try await coordinator.stderr.first("the coordinator to log the departure") { $0.contains("worker left") && $0.contains("worker-2") }
            #expect(coordinator.isRunning)

            let rejoinMark = coordinator.stdout.count
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the message pane running again", from: rejoinMark, where: StatusLine.matching("DetailPaneWorkflow", "running"))
            try await coordinator.stdout.first("the pane back on worker-2", from: rejoinMark, where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
        }
    }

    @Test("a worker killed without goodbye is declared gone; its child unavailable; the coordinator keeps serving")
    func killedWorker() async throws {
        try await ClusterFixture.with("killed") { cluster in
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            let worker2 = try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the demo placement", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            let mark = coordinator.stdout.count
            worker2.forceKill()
            try await coordinator.stdout.first("the message pane unavailable", from: mark, where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
            // Declared gone by heartbeat silence or by the socket's unreachable peer, whichever first.
            try await coordinator.stderr.first("the departure to be logged") { $0.contains("worker left") && $0.contains("worker-2") }
            #expect(coordinator.isRunning)
        }
    }

    @Test("garbage on the coordinator's endpoint is logged, answered with ERROR, and the cluster keeps serving")
    func garbageIsAnswered() async throws {
        try await ClusterFixture.with("garbage") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let reply = try await withSafetyTimeout("an answer to garbage") { [endpoint = cluster.endpoint] in
                let context = try ZMQContext()
                let socket = try ZMQSocket(.dealer, context: context)
                defer {
                    socket.close()
                    context.shutdown()
                }
                try socket.connect(endpoint)
                try socket.send([[0xde, 0xad, 0xbe, 0xef], [0x00]])
                let deadline = ContinuousClock.now + safetyTimeout
                while ContinuousClock.now < deadline {
                    if let frames = try socket.receiveMultipart(.timeout(.milliseconds(200))) { return frames }
                }
                throw WaitFailure(description: "no answer")
            }
            let envelope = try Envelope(frames: reply)
            #expect(envelope.kind == .error)
            try await coordinator.stderr.first("the garbage to be logged") { $0.contains("malformed message") }

            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the tree after garbage", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            #expect(coordinator.isRunning)
        }
    }

    @Test("an invalid configuration file is rejected at start with the file, the key and what was expected")
    func invalidConfigRejected() async throws {
        try await ClusterFixture.with("invalid") { cluster in
            let path = cluster.directory.appendingPathComponent("bad.json").path
            try Data(#"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "heartbeat": {"interval_ms": "fast"}}"#.utf8)
                .write(to: URL(fileURLWithPath: path))
            for executable in ["test-coordinator", "test-worker"] {
                let arguments = executable == "test-worker" ? ["--config", path, "--name", "w"] : ["--config", path]
                let daemon = try cluster.start(executable, arguments, label: executable)
                #expect(try await daemon.waitForExit() == 78)
                let message = daemon.stderr.lines.joined(separator: "\n")
                #expect(message.contains(path))
                #expect(message.contains("heartbeat.interval_ms"))
                #expect(message.contains("expected a positive integer"))
            }
        }
    }

    @Test("a root the coordinator does not register is a configuration error (exit 78) naming the known roots")
    func unknownRootRejected() async throws {
        try await ClusterFixture.with("unknown-root") { cluster in
            let coordinator = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath, "--root", "my-app"], label: "coordinator")
            #expect(try await coordinator.waitForExit() == 78)
            #expect(coordinator.stderr.lines.contains { $0.contains(#"unknown root workflow "my-app" (known: ledger-board, list-detail)"#) })
        }
    }

    @Test("--version prints the library's version and exits 0, needing no configuration", arguments: ["test-coordinator", "test-worker"])
    func version(executable: String) async throws {
        try await ClusterFixture.with("version") { cluster in
            let daemon = try cluster.start(executable, ["--version"], label: executable)
            #expect(try await daemon.waitForExit() == 0)
            #expect(daemon.stdout.lines == [WorkflowClusterVersion.current])
        }
    }

    @Test("--help explains every flag", arguments: [
        ("test-coordinator", ["serve", "--help"], [
            "--config", "--log-level", "--log-format", "--endpoint", "--root", "--print-renderings", "--picks", "--list-workers",
            "--events-from-stdin", "--version", "--store-kind", "--store-path", "--store-url", "--store-lease-ms",
            "--sessions-spread-lease-ms", "--sessions-advertised-url",
        ]),
        ("test-coordinator", ["--help"], ["serve", "keygen"]),
        ("test-coordinator", ["keygen", "--help"], ["--config", "--dir", "--workers"]),
        ("test-worker", ["--help"], ["--config", "--log-level", "--log-format", "--endpoint", "--name", "--pool"]),
    ])
    func help(executable: String, arguments: [String], flags: [String]) async throws {
        try await ClusterFixture.with("help") { cluster in
            let daemon = try cluster.start(executable, arguments, label: executable)
            #expect(try await daemon.waitForExit() == 0)
            let help = daemon.stdout.lines.joined(separator: "\n")
            for flag in flags { #expect(help.contains(flag), "\(executable) --help does not mention \(flag)") }
        }
    }
}

/// The daemons' log lines.
@Suite("Cluster logs")
struct ClusterLogTests {
    @Test("--log-format json writes one JSON object per event with node, worker, path and correlation metadata")
    func jsonLogs() async throws {
        try await ClusterFixture.with("jsonlog") { cluster in
            let coordinator = try await cluster.startCoordinator(["--log-format", "json", "--log-level", "debug"])
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            let joined = try await coordinator.stderr.first("a JSON 'worker joined' line") { $0.contains("worker joined") }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(joined.utf8)) as? [String: Any])
            #expect(object["node"] as? String == "coordinator")
            #expect(object["level"] as? String == "info")
            #expect(object["worker"] is String)
            #expect(object["types"] is NSNumber, "a count is a JSON number")
            let start = try await coordinator.stderr.first("a debug line with a correlation id") { $0.contains(#""correlation""#) }
            let startObject = try #require(try JSONSerialization.jsonObject(with: Data(start.utf8)) as? [String: Any])
            #expect((startObject["path"] as? String)?.contains("ListDetailWorkflow") == true)
            #expect(startObject["correlation"] is NSNumber)
            #expect(coordinator.stderr.lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        }
    }
}

/// One live worker per name: a second `workflow-worker` started under the name of a live worker
/// (a leftover process, a replacement started during a partition) is refused by the coordinator
/// and exits 75 saying why, and the first keeps its place and its child.
@Suite("Duplicate worker names")
struct DuplicateWorkerNameTests {
    @Test("a second live worker of the same name is refused and exits 75; the first keeps its child")
    func secondLiveWorkerOfTheSameNameExits() async throws {
        try await ClusterFixture.with("twin") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let first = try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the inbox running on worker-1", where: StatusLine.matching("ListPaneWorkflow", "running"))
            let joinedBefore = coordinator.stderr.lines.filter { $0.contains("worker joined") }.count

            let twin = try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-1"], label: "twin")
            #expect(try await twin.waitForExit() == 75)
            #expect(twin.stderr.lines.contains { $0.contains("a live worker named worker-1 is already connected") })
            try await coordinator.stderr.first("the coordinator to log the refusal") { $0.contains("HELLO refused: name taken") }
            #expect(!coordinator.stderr.lines.contains { $0.contains("worker left") }, "the first worker was evicted")
            #expect(coordinator.stderr.lines.filter { $0.contains("worker joined") }.count == joinedBefore)
            #expect(first.isRunning, "the first worker still runs")
        }
    }
}
