import Foundation
import Testing
import WorkflowCluster

/// The gateway's connection limits in the configuration file, the environment and the flags.
@Suite("Gateway limits configuration")
struct GatewayLimitsConfigurationTests {
    @Test("the file sets the timeouts and the connection limit; defaults otherwise; bad values name their key")
    func file() throws {
        #expect(try GatewayConfigurationTests.parse("{}").gateway.limits == GatewayLimits())
        let limits = try GatewayConfigurationTests.parse(
            #"{"header_timeout_ms": 1500, "body_timeout_ms": 2500, "idle_timeout_ms": 3500, "max_connections": 64}"#
        ).gateway.limits
        #expect(limits.headerTimeout == .milliseconds(1500))
        #expect(limits.bodyTimeout == .milliseconds(2500))
        #expect(limits.idleTimeout == .milliseconds(3500))
        #expect(limits.maxConnections == 64)
        for (key, bad) in [("header_timeout_ms", "0"), ("body_timeout_ms", "-1"), ("idle_timeout_ms", #""10""#), ("max_connections", "1.5")] {
            let error = GatewayConfigurationTests.error { _ = try GatewayConfigurationTests.parse("{\"\(key)\": \(bad)}") }
            #expect(error?.key == "gateway.\(key)", "\(key): \(bad)")
        }
    }

    @Test("flags override WORKFLOW_GATEWAY_* variables, which override the file; a bad override is a configuration error")
    func overrides() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-gateway-limits-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cluster.json").path
        try Data(
            #"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "gateway": {"listen": "127.0.0.1:0", "header_timeout_ms": 1000, "max_connections": 10}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: file))

        let fromFile = try await ClusterSettings.load(file: file, environment: [:]).configuration.gateway.limits
        #expect(fromFile.headerTimeout == .milliseconds(1000) && fromFile.maxConnections == 10)
        let environment = [
            "WORKFLOW_GATEWAY_HEADER_TIMEOUT_MS": "2000", "WORKFLOW_GATEWAY_BODY_TIMEOUT_MS": "3000", "WORKFLOW_GATEWAY_IDLE_TIMEOUT_MS": "4000",
            "WORKFLOW_GATEWAY_MAX_CONNECTIONS": "20",
        ]
        let fromEnvironment = try await ClusterSettings.load(file: file, environment: environment).configuration.gateway.limits
        #expect(
            fromEnvironment
                == GatewayLimits(headerTimeout: .milliseconds(2000), bodyTimeout: .milliseconds(3000), idleTimeout: .milliseconds(4000), maxConnections: 20))
        var flags = ClusterOverrides()
        flags[.gatewayHeaderTimeout] = "5000"
        flags[.gatewayMaxConnections] = "30"
        let fromFlags = try await ClusterSettings.load(file: file, overrides: flags, environment: environment).configuration.gateway.limits
        #expect(fromFlags.headerTimeout == .milliseconds(5000) && fromFlags.maxConnections == 30)
        #expect(fromFlags.bodyTimeout == .milliseconds(3000), "what no flag sets comes from the environment")

        var bad = ClusterOverrides()
        bad[.gatewayIdleTimeout] = "soon"
        await #expect(throws: ClusterConfigurationError.self) { _ = try await ClusterSettings.load(file: file, overrides: bad, environment: [:]) }
    }

    @Test("the stream's pacing: stream_window and stream_tick_ms from the file, WORKFLOW_GATEWAY_STREAM_* and the flags; defaults 16 and 16 ms; bad values name their key")
    func streamPacing() async throws {
        #expect(try GatewayConfigurationTests.parse("{}").gateway.stream == GatewayStreamPacing(window: 16, tick: .milliseconds(16)))
        let pacing = try GatewayConfigurationTests.parse(#"{"stream_window": 4, "stream_tick_ms": 0}"#).gateway.stream
        #expect(pacing == GatewayStreamPacing(window: 4, tick: .zero))
        for (key, bad) in [("stream_window", "0"), ("stream_tick_ms", "-1"), ("stream_window", #""8""#)] {
            let error = GatewayConfigurationTests.error { _ = try GatewayConfigurationTests.parse("{\"\(key)\": \(bad)}") }
            #expect(error?.key == "gateway.\(key)", "\(key): \(bad)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-gateway-pacing-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cluster.json").path
        try Data(#"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "gateway": {"listen": "127.0.0.1:0", "stream_window": 8}}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let environment = ["WORKFLOW_GATEWAY_STREAM_TICK_MS": "33"]
        var flags = ClusterOverrides()
        flags[.gatewayStreamWindow] = "2"
        let loaded = try await ClusterSettings.load(file: file, overrides: flags, environment: environment).configuration.gateway.stream
        #expect(loaded == GatewayStreamPacing(window: 2, tick: .milliseconds(33)))
    }
}
