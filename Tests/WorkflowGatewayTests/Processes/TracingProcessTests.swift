import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

/// One click through the gateway of a coordinator with workers, traced: the daemons export their
/// spans over OTLP/HTTP (JSON) to a receiver the test starts, and the click is one trace whose
/// spans come from both processes, each the child of the one before it, in order.
@Suite("Tracing across processes")
struct TracingProcessTests {
    /// A span as the receiver prints it.
    struct ReceivedSpan: Decodable, Sendable {
        var event: String
        var service: String
        var instance: String
        var traceId: String
        var spanId: String
        var parentSpanId: String
        var name: String
        var start: UInt64
    }

    /// The receiver's first line.
    struct Listening: Decodable {
        var port: Int
    }

    /// The receiver (Tests/Helpers/otlp-receiver), a Python script of the standard library.
    static let receiverScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Helpers/otlp-receiver/otlp_receiver.py").path
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The spans of one click, in the order they begin.
    static let chain = ["gateway.event", "workflow.event.send", "workflow.event.apply", "workflow.render", "workflow.flush",
                        "workflow.flush.apply", "gateway.push"]

    @Test(
        "one click through the gateway is one trace over the coordinator and the worker, its spans in order",
        .enabled(if: python != nil, "python3 is not installed: the test's OTLP receiver is a Python script"))
    func oneTracePerClick() async throws {
        try await ClusterFixture.with("tracing") { cluster in
            let receiver = try cluster.start(try #require(Self.python), [Self.receiverScript], label: "otlp-receiver")
            let listening = try await receiver.stdout.first("the OTLP receiver to listen") { $0.contains(#""event": "listening""#) }
            let port = try JSONDecoder().decode(Listening.self, from: Data(listening.utf8)).port
            let tracing = ["--tracing-otlp-endpoint", "http://127.0.0.1:\(port)", "--tracing-otlp-protocol", "http/json"]
            // Exported at once rather than every 5 s (the standard variable, read by swift-otel).
            let environment = ["OTEL_BSP_SCHEDULE_DELAY": "50"]
            let store = cluster.directory.appendingPathComponent("store.sqlite").path
            let coordinator = try await cluster.startCoordinator(
                tracing + ["--store-kind", "sqlite", "--store-path", store], environment: environment)
            let gateway = try await GatewayClient.of(coordinator)
            try await cluster.startWorker("worker-1", tracing, environment: environment)
            try await cluster.startWorker("worker-2", tracing, environment: environment)

            let selected = Mutex<Bool>(false)
            try await withSafetyTimeout("message 3 shown on the stream") {
                try await gateway.stream { text in
                    let message = try JSONDecoder().decode(StreamedRendering<ListDetailRendering>.self, from: Data(text.utf8))
                    let screen = message.rendering
                    if selected.withLock({ $0 }) { return screen.detail.id == 3 }
                    guard screen.list.renderedBy == "worker-1", screen.detail.renderedBy == "worker-2", let token = screen.list.onPick
                    else { return false }
                    let answer = try await gateway.post("/api/events/\(token)", json: "3")
                    if answer.status == 202 { selected.withLock { $0 = true } }
                    return false
                }
            }
            for name in Self.chain + ["workflow.commit"] {
                try await receiver.stdout.first("the \(name) span") { $0.contains(#""name": "\#(name)""#) }
            }

            let spans = receiver.stdout.lines.compactMap { line in
                try? JSONDecoder().decode(ReceivedSpan.self, from: Data(line.utf8))
            }.filter { $0.event == "span" }
            let traceID = try #require(spans.first { $0.name == "gateway.event" }?.traceId, "the gateway's span of the click")
            let trace = spans.filter { $0.traceId == traceID }
            func span(_ name: String) throws -> ReceivedSpan {
                try #require(trace.first { $0.name == name }, "\(name) in the click's trace: \(trace.map(\.name))")
            }
            let chain = try Self.chain.map(span)
            let request = chain[0]
            let commit = try span("workflow.commit")
            #expect(Set(trace.map(\.service)) == ["workflow-coordinator", "workflow-worker"], "spans of both processes")
            #expect(try span("workflow.event.apply").instance == "worker-1", "applied by the worker hosting the list")
            let links = trace.map { "\($0.name) \($0.spanId) ← \($0.parentSpanId) (\($0.service))" }
            #expect(request.parentSpanId.isEmpty, "the request starts the trace: \(links)")
            #expect(commit.parentSpanId == request.spanId, "the commit inside the request: \(links)")
            // Each span of the chain is the child of the one before it (the render and the flush
            // both continue the apply), and begins after it.
            let parents = ["gateway.event", "workflow.event.send", "workflow.event.apply", "workflow.event.apply", "workflow.flush",
                           "workflow.flush.apply"]
            for (child, parentName) in zip(chain.dropFirst(), parents) {
                let parent = try span(parentName)
                #expect(child.parentSpanId == parent.spanId, "\(child.name) is a child of \(parentName): \(links)")
            }
            for (earlier, later) in zip(chain, chain.dropFirst()) {
                #expect(earlier.start <= later.start, "\(earlier.name) begins before \(later.name)")
            }
        }
    }
}

extension TracingProcessTests {
    @Test("a daemon given a collector URL that is not http(s) exits 78, naming the setting")
    func invalidEndpointExits78() async throws {
        try await ClusterFixture.with("tracing-invalid") { cluster in
            let coordinator = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath, "--tracing-otlp-endpoint", "collector:4318"], label: "coordinator")
            #expect(try await coordinator.waitForExit() == 78)
            #expect(coordinator.stderr.lines.joined().contains("tracing.otlp_endpoint"), "\(coordinator.stderr.lines)")
            let worker = try cluster.start(
                "test-worker", ["--config", cluster.configPath, "--name", "worker-1"], label: "worker-1",
                environment: ["WORKFLOW_TRACING_OTLP_ENDPOINT": "ftp://collector"])
            #expect(try await worker.waitForExit() == 78)
            #expect(worker.stderr.lines.joined().contains("WORKFLOW_TRACING_OTLP_ENDPOINT"), "\(worker.stderr.lines)")
        }
    }
}
