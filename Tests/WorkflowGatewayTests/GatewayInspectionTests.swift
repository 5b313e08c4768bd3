import ClusterTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import NIOCore
import Prometheus
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowCluster
import WorkflowGateway
import WorkflowRemote
import WorkflowClusterTesting

/// `/api/tree`, the probes and `/metrics`, over a real parent runtime and an in-process worker.
@Suite("Gateway inspection, probes and metrics")
struct GatewayInspectionTests {
    typealias Tree = TreeJSON

    struct Readiness: Decodable {
        struct Waiting: Decodable {
            var path: String
            var status: String
        }
        var ready: Bool
        var waitingFor: [Waiting]
    }

    static let counterType = CounterWorkflow.workflowTypeName

    /// A cluster configuration listing `workers` with `placement` for the counters.
    static func configuration(workers: [String], placement: RemotePlacement) -> ClusterConfiguration {
        ClusterConfiguration(
            coordinatorEndpoint: "ipc:///unused", workers: workers.map { WorkerEntry(name: $0) },
            placement: PlacementTable(rules: [.init(pattern: counterType, placement: placement)]))
    }

    @Test("GET /api/tree: the root, the remote child with where it runs and its events, the worker with its load")
    func tree() async throws {
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let placement = PlacementTable(rules: [.init(pattern: Self.counterType, placement: .worker("gw-tree-worker"))])
        let parent = try GatewayTesting.parentRuntime(name: "gw-tree-parent", placement: placement, factory: factory)
        let worker = try GatewayTesting.worker(named: "gw-tree-worker", joining: parent)
        await parent.waitForWorkers(count: 1)
        let session = WorkflowRootSession(
            name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), loop: parent,
            observers: [WorkflowMetricsObserver(root: "board", factory: factory)])
        try await GatewayRouteTests.rendering(of: session, as: BoardJSON.self, "the worker's rendering") { $0.c.onIncrement != nil }
        let configuration = Self.configuration(workers: ["gw-tree-worker", "gw-tree-absent"], placement: .worker("gw-tree-worker"))
        let options = GatewayTesting.options(registry: registry)
        try await GatewayTesting.application(session: session, runtime: parent, configuration: configuration, options: options).test(.router) {
            client in
            let token = try #require(try JSONDecoder().decode(BoardJSON.self, from: session.latestRendering.json).c.onIncrement)
            try await client.execute(uri: "/api/events/\(token)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("2")) { #expect($0.status == .accepted) }
            // The worker's flush carries its rendering and the event's acknowledgement together.
            try await GatewayRouteTests.rendering(of: session, as: BoardJSON.self, "count 2") { $0.c.count == 2 }

            let tree = try await client.execute(uri: "/api/tree", method: .get) { try GatewayTesting.decode(Tree.self, $0.body) }
            #expect(tree.root.name == "board")
            #expect(tree.root.runsOn.process == "coordinator" && tree.root.runsOn.pid == getpid())
            #expect(tree.root.renderingSequence == session.latestRendering.sequence)
            let node = try #require(tree.nodes.first)
            #expect(tree.nodes.count == 1)
            #expect(node.type == Self.counterType && node.key == "c" && node.path.hasSuffix("[c]"))
            #expect(node.runsOn?.process == "gw-tree-worker" && node.status == "running")
            // The worker announced where it runs (here: this test process, on this host).
            #expect(node.runsOn?.pid == getpid() && node.runsOn?.host == ProcessInfo.processInfo.hostName)
            #expect((node.propsBytes ?? 0) > 0 && (node.renderingBytes ?? 0) > 0)
            #expect(node.events?.sent == 1 && node.events?.acknowledged == 1 && node.events?.outstanding == 0)
            #expect(node.depth == 1)
            #expect(node.lastRoundTripMilliseconds != nil)
            #expect(tree.workers.map(\.name) == ["gw-tree-worker"])
            #expect(tree.workers.first?.load == 1 && tree.workers.first?.configured == true)
            #expect(tree.missingWorkers == ["gw-tree-absent"])

            let metrics = try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                return String(buffer: response.body)
            }
            for line in [
                #"workflow_remote_events_sent_total{node="gw-tree-parent"} 1"#, #"workflow_remote_workers_joined_total{node="gw-tree-parent"} 1"#,
                #"workflow_gateway_events_total{result="sent"} 1"#, "workflow_remote_renderings_received_total", "workflow_remote_round_trip_seconds",
                "workflow_remote_sent_bytes_total", "workflow_remote_received_bytes_total", "workflow_gateway_requests_total",
            ] {
                #expect(metrics.contains(line), "\(line) in:\n\(metrics)")
            }
            // The root host's observer: renders, actions and the time to a settled rendering.
            for series in [
                #"workflow_renders_total{root="board"}"#, #"workflow_actions_applied_total{root="board"}"#,
                #"workflow_render_seconds_count{root="board"}"#,
            ] {
                let value = metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
                #expect((value ?? 0) > 0, "\(series) counted: \(value.map { "\($0)" } ?? "absent")")
            }
        }
        await session.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test("GET /api/tree lists local children too, on the coordinator, in tree order beside the remote ones")
    func treeWithLocalChildren() async throws {
        // Counter "l" renders in the coordinator, counter "c" on the worker.
        let placement = PlacementTable(rules: [
            .init(pattern: "*[l]", placement: .local), .init(pattern: Self.counterType, placement: .worker("gw-local-worker")),
        ])
        let parent = try GatewayTesting.parentRuntime(name: "gw-local-parent", placement: placement)
        let worker = try GatewayTesting.worker(named: "gw-local-worker", joining: parent)
        await parent.waitForWorkers(count: 1)
        let session = WorkflowRootSession(
            name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "l", step: 1), .init(key: "c", step: 1)], placement: .configured),
            loop: parent)
        try await GatewayRouteTests.rendering(of: session, as: BoardJSON.self, "the worker's rendering") { $0.c.onIncrement != nil }
        let configuration = Self.configuration(workers: ["gw-local-worker"], placement: .worker("gw-local-worker"))
        try await GatewayTesting.application(session: session, runtime: parent, configuration: configuration).test(.router) { client in
            let tree = try await client.execute(uri: "/api/tree", method: .get) { try GatewayTesting.decode(Tree.self, $0.body) }
            let liveTree = await session.liveTree()
            // One entry per node below the root, in the host's pre-order.
            #expect(tree.nodes.map(\.path) == liveTree.dropFirst().map(\.path))
            #expect(tree.nodes.map(\.depth) == liveTree.dropFirst().map(\.depth))
            let remote = try #require(tree.nodes.first { $0.path.hasSuffix("[c]") })
            #expect(remote.placement != "local" && remote.runsOn?.process == "gw-local-worker" && remote.events != nil)
            let local = tree.nodes.filter { $0.path.contains("[l]") }
            #expect(!local.isEmpty)
            for node in local {
                #expect(node.placement == "local" && node.status == "running", "\(node.path)")
                #expect(node.runsOn?.process == "coordinator" && node.runsOn?.pid == getpid(), "\(node.path)")
                #expect(node.events == nil && node.propsBytes == nil, "\(node.path)")
            }
            // The local counter's own workflow is listed below its proxy.
            #expect(local.contains { $0.type == Self.counterType && $0.depth == 2 }, "\(local.map { ($0.path, $0.type, $0.depth) })")
        }
        await session.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test("each rendering message carries the remote children's statuses: not running while the worker is away, running on it once it joins, unavailable when it leaves")
    func childStatusesInRenderingMessages() async throws {
        let placement = PlacementTable(rules: [.init(pattern: Self.counterType, placement: .worker("gw-status-worker"))])
        let parent = try GatewayTesting.parentRuntime(name: "gw-status-parent", placement: placement)
        let session = WorkflowRootSession(
            name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), loop: parent)
        let configuration = Self.configuration(workers: ["gw-status-worker"], placement: .worker("gw-status-worker"))
        typealias Envelope = RenderingEnvelope<BoardJSON>
        try await GatewayTesting.application(session: session, runtime: parent, configuration: configuration).test(.live) { client in
            let before = try await client.execute(uri: "/api/rendering", method: .get) { try GatewayTesting.decode(Envelope.self, $0.body) }
            #expect(before.children.count == 1 && before.children.first?.status != "running", "\(before.children)")
            #expect(before.children.first?.type == Self.counterType && before.children.first?.path.hasSuffix("[c]") == true)

            // The stream: the worker joins (running on it), then leaves (unavailable, saying why).
            let worker = try GatewayTesting.worker(named: "gw-status-worker", joining: parent)
            let left = Mutex(false)
            _ = try await withSafetyTimeout("running on the worker, then unavailable") {
                try await client.ws("/api/renderings") { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let child = try JSONDecoder().decode(Envelope.self, from: Data(text.utf8)).children.first
                        else { continue }
                        if child.status == "running" && child.worker == "gw-status-worker" && child.detail == "on gw-status-worker",
                            !left.withLock({ $0 })
                        {
                            left.withLock { $0 = true }
                            await worker.shutdown()
                        }
                        if left.withLock({ $0 }) && child.status == "unavailable" && !child.detail.isEmpty { return }
                    }
                }
            }
            let after = try await client.execute(uri: "/api/rendering", method: .get) { try GatewayTesting.decode(Envelope.self, $0.body) }
            #expect(after.children.first?.status == "unavailable", "\(after.children)")
        }
        await session.stop()
        await parent.shutdown()
    }

    @Test("GET /health/ready: 503 naming the child while its configured worker is away, 200 once it runs; /health/live 200")
    func readiness() async throws {
        let placement = PlacementTable(rules: [.init(pattern: Self.counterType, placement: .worker("gw-ready-worker"))])
        let parent = try GatewayTesting.parentRuntime(name: "gw-ready-parent", placement: placement)
        let session = WorkflowRootSession(
            name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), loop: parent)
        let configuration = Self.configuration(workers: ["gw-ready-worker"], placement: .worker("gw-ready-worker"))
        try await GatewayTesting.application(session: session, runtime: parent, configuration: configuration).test(.router) { client in
            try await client.execute(uri: "/health/live", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let report = try GatewayTesting.decode(Readiness.self, response.body)
                #expect(!report.ready)
                #expect(report.waitingFor.count == 1 && report.waitingFor.first?.path.hasSuffix("[c]") == true, "\(report.waitingFor)")
            }
            let worker = try GatewayTesting.worker(named: "gw-ready-worker", joining: parent)
            try await GatewayRouteTests.rendering(of: session, as: BoardJSON.self, "the worker's rendering") { $0.c.onIncrement != nil }
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let report = try GatewayTesting.decode(Readiness.self, response.body)
                #expect(report.ready)
            }
            await worker.shutdown()
        }
        await session.stop()
        await parent.shutdown()
    }

    @Test("GET /health/ready: a child placed on a worker the configuration does not list is unavailable by configuration: ready")
    func unavailableByConfiguration() async throws {
        let placement = PlacementTable(rules: [.init(pattern: Self.counterType, placement: .worker("nobody"))])
        let parent = try GatewayTesting.parentRuntime(name: "gw-config-parent", placement: placement)
        let changes = parent.statusChanges
        let session = WorkflowRootSession(
            name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), loop: parent)
        try await withSafetyTimeout("the child unavailable") {
            for await change in changes {
                if case .unavailable = change.status { return }
            }
        }
        let configuration = Self.configuration(workers: ["someone-else"], placement: .worker("nobody"))
        try await GatewayTesting.application(session: session, runtime: parent, configuration: configuration).test(.router) { client in
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
        }
        await session.stop()
        await parent.shutdown()
    }
}
