import Foundation
import Testing
@testable import WorkflowCluster

/// `tracing.*`: off by default; an OTLP/HTTP collector's URL from the file, a flag or a variable;
/// anything else refused naming the key and where it came from.
@Suite("Tracing configuration")
struct TracingConfigurationTests {
    static let base = #"{"coordinator":{"endpoint":"ipc:///tmp/x"}"#

    /// A refused configuration's words (the file named `cluster.json`).
    struct Refusal: Error {
        var words: String
    }

    /// The settings of `json` with `environment` and `overrides`, or the refusal in words.
    static func load(
        _ json: String, environment: [String: String] = [:], overrides: ClusterOverrides = ClusterOverrides()
    ) async -> Result<TracingSettings, Refusal> {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-tracing-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            return .success(try await ClusterSettings.load(file: file, overrides: overrides, environment: environment).configuration.tracing)
        } catch {
            return .failure(Refusal(words: ((error as? ClusterConfigurationError)?.description ?? "\(error)").replacingOccurrences(of: file, with: "cluster.json")))
        }
    }

    @Test("off unless an endpoint is given; a URL without a path gets /v1/traces, one with a path is kept")
    func endpoints() async throws {
        let off = try await Self.load(Self.base + "}").get()
        #expect(off.otlpEndpoint == nil && off.tracesURL == nil)
        let file = try await Self.load(Self.base + #","tracing":{"otlp_endpoint":"http://127.0.0.1:4318"}}"#).get()
        #expect(file.tracesURL == "http://127.0.0.1:4318/v1/traces" && file.otlpProtocol == .protobuf)
        let flag = try await Self.load(
            Self.base + "}",
            overrides: ClusterOverrides([.tracingOTLPEndpoint: "https://collector.example/otlp/v1/traces", .tracingOTLPProtocol: "http/json"])
        ).get()
        #expect(flag.tracesURL == "https://collector.example/otlp/v1/traces" && flag.otlpProtocol == .json)
        let variable = try await Self.load(Self.base + "}", environment: ["WORKFLOW_TRACING_OTLP_ENDPOINT": "http://[::1]:4318/"]).get()
        #expect(variable.tracesURL == "http://[::1]:4318/v1/traces")
    }

    @Test("a URL that is not http(s) with a host is refused, naming the key and its source", arguments: [
        "nowhere", "ftp://collector:21", "http://", "http://collector:4318/?q=1",
    ])
    func invalidEndpoint(_ endpoint: String) async {
        let file = await Self.load(Self.base + #","tracing":{"otlp_endpoint":"\#(endpoint)"}}"#)
        guard case .failure(let refusal) = file else {
            Issue.record("\(endpoint) accepted")
            return
        }
        let words = refusal.words
        #expect(words.contains("cluster.json: key 'tracing.otlp_endpoint'") && words.contains("an http:// or https:// URL"), "\(words)")
        let variable = await Self.load(Self.base + "}", environment: ["WORKFLOW_TRACING_OTLP_ENDPOINT": endpoint])
        guard case .failure(let variableRefusal) = variable else {
            Issue.record("\(endpoint) accepted from the variable")
            return
        }
        #expect(variableRefusal.words.contains("WORKFLOW_TRACING_OTLP_ENDPOINT"), "\(variableRefusal.words)")
    }

    @Test("a protocol without an endpoint is refused naming both")
    func protocolAlone() async {
        let result = await Self.load(Self.base + #","tracing":{"otlp_protocol":"http/json"}}"#)
        guard case .failure(let refusal) = result else {
            Issue.record("accepted")
            return
        }
        let words = refusal.words
        #expect(words.contains("tracing.otlp_protocol") && words.contains("tracing.otlp_endpoint"), "\(words)")
    }
}
