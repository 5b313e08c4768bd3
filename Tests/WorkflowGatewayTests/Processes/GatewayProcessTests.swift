import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowClusterTesting

/// The coordinator's gateway against real daemons: a coordinator and two workers, HTTP and a
/// WebSocket over loopback.
@Suite("Gateway across processes")
struct GatewayProcessTests {
    typealias Tree = TreeJSON

    @Test("POST an event through the gateway: the next streamed rendering shows it, rendered by the worker; tree, probes and metrics agree")
    func eventThroughTheGateway() async throws {
        try await ClusterFixture.with("gateway-e2e") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let gateway = try await GatewayClient.of(coordinator)
            #expect(try await gateway.get("/health/live").status == 200)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")

            let selected = Mutex<UInt64?>(nil)
            let answers = Mutex<[Int]>([])
            try await withSafetyTimeout("message 3 rendered by worker-2 on the stream") {
                try await gateway.stream { text in
                    let message = try JSONDecoder().decode(StreamedRendering<ListDetailRendering>.self, from: Data(text.utf8))
                    let screen = message.rendering
                    #expect(message.root == "list-detail")
                    if let sentAt = selected.withLock({ $0 }) {
                        // Renderings after the event: wait for the one that shows it.
                        #expect(message.sequence > sentAt)
                        return screen.detail.id == 3 && screen.detail.renderedBy == "worker-2"
                    }
                    guard screen.list.renderedBy == "worker-1", screen.detail.renderedBy == "worker-2",
                        screen.list.ids.contains(3), let token = screen.list.onPick
                    else { return false }
                    let answer = try await gateway.post("/api/events/\(token)", json: "3")
                    answers.withLock { $0.append(answer.status) }
                    // A newer rendering may have replaced the token meanwhile: the client reads on.
                    if answer.status == 202 { selected.withLock { $0 = message.sequence } }
                    return false
                }
            }
            #expect(answers.withLock { $0 }.last == 202)

            let latest = try JSONDecoder().decode(
                StreamedRendering<ListDetailRendering>.self, from: try await gateway.get("/api/rendering").body)
            #expect(latest.rendering.detail.id == 3)
            #expect(latest.rendering.detail.renderedBy == "worker-2")

            let tree = try JSONDecoder().decode(Tree.self, from: try await gateway.get("/api/tree").body)
            #expect(tree.root.name == "list-detail")
            #expect(tree.root.runsOn.process == "coordinator" && tree.root.runsOn.pid == coordinator.pid)
            #expect(tree.workers.map(\.name) == ["worker-1", "worker-2"])
            #expect(tree.missingWorkers.isEmpty)
            let inbox = try #require(tree.nodes.first { $0.type.hasSuffix("ListPaneWorkflow") })
            #expect(inbox.runsOn?.process == "worker-1" && inbox.status == "running" && inbox.key == "list")
            // Ownership to check: the placement's epoch and since when, here and in the worker's log.
            #expect(inbox.epoch == 1 && inbox.placedAt != nil, "\(inbox)")
            let worker1 = try #require(cluster.daemon(labelled: "worker-1"))
            #expect(worker1.stderr.lines.contains { $0.contains("hosting \(inbox.path), epoch 1") }, "\(worker1.stderr.lines)")
            let inboxEvents = try #require(inbox.events)
            #expect(inboxEvents.sent >= 1 && inboxEvents.acknowledged == inboxEvents.sent && inboxEvents.outstanding == 0)
            let message = try #require(tree.nodes.first { $0.type.hasSuffix("DetailPaneWorkflow") })
            #expect(message.runsOn?.process == "worker-2" && message.status == "running")

            let ready = try await gateway.get("/health/ready")
            #expect(ready.status == 200, "\(ready.text)")
            let metrics = try await gateway.get("/metrics").text
            for name in [
                #"workflow_remote_workers_joined_total{node="coordinator"} 2"#, #"workflow_gateway_events_total{result="sent"} 1"#,
                "workflow_remote_events_sent_total", "workflow_remote_round_trip_seconds", "workflow_remote_received_bytes_total",
                #"workflow_renders_total{root="list-detail"}"#, #"workflow_render_seconds_count{root="list-detail"}"#,
                #"workflow_action_outputs_total{root="list-detail"}"#,
            ] {
                #expect(metrics.contains(name), "\(name) in /metrics")
            }
        }
    }

    @Test("a worker killed: readiness says so and the tree shows its child unavailable; restarted, both come back")
    func workerKilledAndBack() async throws {
        try await ClusterFixture.with("gateway-ready") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let gateway = try await GatewayClient.of(coordinator)
            try await cluster.startWorker("worker-1")
            let worker2 = try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("both panes running") { ListDetailFrame.rendered(list: "worker-1", detail: "worker-2")($0) }
            #expect(try await gateway.get("/health/ready").status == 200)

            let killedAt = coordinator.stdout.count
            worker2.forceKill()
            try await coordinator.stdout.first("the message pane unavailable", from: killedAt) { StatusLine.matching("DetailPaneWorkflow", "unavailable")($0) }
            let notReady = try await gateway.get("/health/ready")
            #expect(notReady.status == 503)
            #expect(notReady.text.contains("DetailPaneWorkflow"), "\(notReady.text)")
            let tree = try JSONDecoder().decode(Tree.self, from: try await gateway.get("/api/tree").body)
            #expect(tree.missingWorkers == ["worker-2"])
            #expect(tree.nodes.first { $0.type.hasSuffix("DetailPaneWorkflow") }?.status == "unavailable")

            let mark = coordinator.stdout.count
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the message pane back", from: mark) { StatusLine.matching("DetailPaneWorkflow", "running")($0) }
            #expect(try await gateway.get("/health/ready").status == 200)
        }
    }

    @Test("SIGTERM while a client streams renderings: the stream ends and the coordinator exits 0")
    func shutdownWithAnOpenStream() async throws {
        try await ClusterFixture.with("gateway-shutdown") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let gateway = try await GatewayClient.of(coordinator)
            let streaming = AsyncStream<Void>.makeStream()
            let client = Task {
                try await gateway.stream { _ in
                    streaming.continuation.yield()
                    return false
                }
            }
            try await withSafetyTimeout("the first streamed rendering") {
                for await _ in streaming.stream { return }
            }
            #expect(try await coordinator.terminate() == 0)
            // The server closed the stream: the client's read ends (with or without an error).
            try await withSafetyTimeout("the client's stream to end") { _ = await client.result }
        }
    }

    @Test("a bad gateway address, or a network address without a token, stops the coordinator with exit 78")
    func badGatewayConfiguration() async throws {
        try await ClusterFixture.with("gateway-config") { cluster in
            let bad = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath, "--gateway-listen", "nonsense"], label: "bad listen")
            #expect(try await bad.waitForExit() == 78)
            #expect(bad.stderr.lines.joined().contains("gateway.listen"), "\(bad.stderr.lines)")
            let open = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath], label: "no token",
                environment: ["WORKFLOW_GATEWAY_LISTEN": "0.0.0.0:0"])
            #expect(try await open.waitForExit() == 78)
            #expect(open.stderr.lines.joined().contains("gateway.bearer_token_file"), "\(open.stderr.lines)")
        }
    }

    @Test("a worker's admin endpoint: its own metrics and liveness; a bad address exits 78")
    func workerAdminEndpoint() async throws {
        try await ClusterFixture.with("worker-admin") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let gateway = try await GatewayClient.of(coordinator)
            let worker1 = try await cluster.startWorker("worker-1", ["--admin-listen", "127.0.0.1:0"])
            try await cluster.startWorker("worker-2")
            let line = try await worker1.stderr.first("the admin endpoint") { $0.contains("admin listening") }
            let url = try #require(line.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression).map { String(line[$0]) })
            let admin = GatewayClient(baseURL: url)
            #expect(try await admin.get("/health/live").status == 200)

            // One event applied on worker-1 (the inbox's selection), seen in worker-1's own metrics.
            try await coordinator.stdout.first("both panes running") { ListDetailFrame.rendered(list: "worker-1", detail: "worker-2")($0) }
            let current = try JSONDecoder().decode(StreamedRendering<ListDetailRendering>.self, from: try await gateway.get("/api/rendering").body)
            let token = try #require(current.rendering.list.onPick)
            #expect(try await gateway.post("/api/events/\(token)", json: "2").status == 202)
            try await coordinator.stdout.first("message 2 shown") { line in
                ListDetailFrame.parse(line)?.detail.id == 2
            }
            let metrics = try await admin.get("/metrics").text
            for name in [#"workflow_remote_events_applied_total{node="worker-1"} 1"#, #"workflow_remote_children_hosted{node="worker-1"}"#,
                         #"workflow_remote_sent_bytes_total{node="worker-1"}"#] {
                #expect(metrics.contains(name), "\(name) in:\n\(metrics)")
            }
            // The hosted inbox's own renders and actions, recorded by the worker.
            for series in [#"workflow_renders_total{root="worker-1"}"#, #"workflow_actions_applied_total{root="worker-1"}"#] {
                let value = metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
                #expect((value ?? 0) > 0, "\(series) counted: \(value.map { "\($0)" } ?? "absent") in:\n\(metrics)")
            }

            let bad = try cluster.start(
                "test-worker", ["--config", cluster.configPath, "--name", "worker-3", "--admin-listen", "nowhere"], label: "bad admin")
            #expect(try await bad.waitForExit() == 78)
        }
    }
}
