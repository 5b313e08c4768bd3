import Foundation
import Testing
import WorkflowCluster

/// The configuration's `gateway` section, its flag and its environment override.
@Suite("Gateway configuration")
struct GatewayConfigurationTests {
    static func parse(_ gateway: String) throws -> ClusterConfiguration {
        try ClusterConfigurationParser(file: "/etc/cluster.json").parse(
            Data(#"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "gateway": \#(gateway)}"#.utf8))
    }

    static func error(_ body: () throws -> Void) -> ClusterConfigurationError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ClusterConfigurationError
        }
    }

    @Test("listen addresses: host:port, [IPv6]:port, port 0, off; loopback told apart")
    func addresses() throws {
        #expect(try Self.parse(#"{"listen": "127.0.0.1:8570"}"#).gateway.listen == GatewayAddress(host: "127.0.0.1", port: 8570))
        #expect(try Self.parse(#"{"listen": "localhost:0"}"#).gateway.listen?.port == 0)
        #expect(try Self.parse(#"{"listen": "[::1]:9000"}"#).gateway.listen == GatewayAddress(host: "::1", port: 9000))
        #expect(try Self.parse(#"{"listen": "off"}"#).gateway.listen == nil)
        #expect(try Self.parse("{}").gateway.listen == nil)
        #expect(GatewayAddress(host: "::1", port: 9000).description == "[::1]:9000")
        #expect(GatewayAddress(host: "127.0.0.2", port: 1).isLoopback)
        #expect(!GatewayAddress(host: "0.0.0.0", port: 1).isLoopback)
        for bad in ["8570", "host:", ":8570", "127.0.0.1:99999", "127.0.0.1:-1", "a b:1", "::1:80", "127.0.0.1:80x"] {
            #expect(GatewayAddress(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("bad values are configuration errors naming the key: a bad address, an unknown key, a network address without a token")
    func errors() throws {
        #expect(Self.error { _ = try Self.parse(#"{"listen": "everywhere"}"#) }?.key == "gateway.listen")
        #expect(Self.error { _ = try Self.parse(#"{"listen": 8570}"#) }?.key == "gateway.listen")
        #expect(Self.error { _ = try Self.parse(#"{"port": 8570}"#) }?.key == "gateway.port")
        let open = Self.error { _ = try Self.parse(#"{"listen": "0.0.0.0:8570"}"#) }
        #expect(open?.key == "gateway.bearer_token_file")
        #expect(open?.description.contains("not a loopback address") == true)
        let withToken = try Self.parse(#"{"listen": "0.0.0.0:8570", "bearer_token_file": "gateway.token"}"#)
        #expect(withToken.gateway.bearerTokenFile == "/etc/gateway.token", "resolved beside the configuration file")
    }

    @Test("the flag overrides WORKFLOW_GATEWAY_LISTEN, which overrides the file; 'off' turns it off; overrides are validated")
    func overrides() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-gateway-config-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cluster.json").path
        try Data(#"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "gateway": {"listen": "127.0.0.1:8570"}}"#.utf8).write(to: URL(fileURLWithPath: file))

        #expect(try await ClusterSettings.load(file: file, environment: [:]).configuration.gateway.listen?.port == 8570)
        let environment = ["WORKFLOW_GATEWAY_LISTEN": "127.0.0.1:9001"]
        #expect(try await ClusterSettings.load(file: file, environment: environment).configuration.gateway.listen?.port == 9001)
        let flag = ClusterOverrides([.gatewayListen: "127.0.0.1:9002"])
        #expect(try await ClusterSettings.load(file: file, overrides: flag, environment: environment).configuration.gateway.listen?.port == 9002)
        #expect(try await ClusterSettings.load(file: file, environment: ["WORKFLOW_GATEWAY_LISTEN": "off"]).configuration.gateway.listen == nil)
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_GATEWAY_LISTEN": "nonsense"])
        }
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, overrides: ClusterOverrides([.gatewayListen: "0.0.0.0:80"]), environment: [:])
        }
    }

    @Test("the bearer token file: read and trimmed; missing, empty, short or readable by others refused without showing the secret")
    func tokenFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-gateway-token-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ text: String, mode: Int) throws -> String {
            let path = directory.appendingPathComponent(UUID().uuidString).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, mode_t(mode))
            return path
        }
        let good = try write("  s3cret-token-0123456789  \nignored\n", mode: 0o600)
        #expect(try GatewaySettings(bearerTokenFile: good).loadBearerToken() == "s3cret-token-0123456789")
        #expect(try GatewaySettings().loadBearerToken() == nil)
        let wide = try write("s3cret-token-0123456789", mode: 0o644)
        let wideError = Self.error { _ = try GatewaySettings(bearerTokenFile: wide).loadBearerToken() }
        #expect(wideError?.description.contains("chmod 600") == true)
        let short = try write("short", mode: 0o600)
        let shortError = Self.error { _ = try GatewaySettings(bearerTokenFile: short).loadBearerToken() }
        #expect(shortError?.description.contains("5 characters") == true)
        #expect(shortError?.description.contains("short\"") == false, "the secret is not shown")
        #expect(Self.error { _ = try GatewaySettings(bearerTokenFile: directory.path + "/missing").loadBearerToken() } != nil)
    }
}
