import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowCluster

/// What an operator sees when something is wrong at start: the exit status (78 for every
/// configuration error, wherever the setting came from) and a message in words, from the real
/// daemons.
@Suite("Operator errors at start")
struct OperatorErrorTests {
    /// Runs `executable` with `arguments` (and `environment`) to its exit; returns the status and
    /// its standard error.
    static func run(
        _ cluster: ClusterFixture, _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> (status: Int32, log: String) {
        let daemon = try cluster.start(executable, arguments, label: executable, environment: environment)
        let status = try await daemon.waitForExit()
        return (status, daemon.stderr.lines.joined(separator: "\n"))
    }

    /// Each daemon's arguments for the fixture's configuration (a listed worker's name for the worker).
    static func arguments(_ executable: String, config: String) -> [String] {
        executable == "test-worker" ? ["--config", config, "--name", "worker-1"] : ["--config", config]
    }

    @Test(
        "a malformed endpoint exits 78 with the key and its source, from the environment, a flag or the file",
        arguments: ["test-coordinator", "test-worker"])
    func malformedEndpoint(executable: String) async throws {
        try await ClusterFixture.with("bad-endpoint") { cluster in
            let fromEnvironment = try await Self.run(
                cluster, executable, Self.arguments(executable, config: cluster.configPath),
                environment: ["WORKFLOW_COORDINATOR_ENDPOINT": "tcp://127.0.0.1:notaport"])
            #expect(fromEnvironment.status == 78, "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains("command line/environment: key 'coordinator.endpoint'"), "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains(#"found "tcp://127.0.0.1:notaport""#), "\(fromEnvironment.log)")
            #expect(!fromEnvironment.log.contains("ZMQError"), "\(fromEnvironment.log)")

            let fromFlag = try await Self.run(
                cluster, executable, Self.arguments(executable, config: cluster.configPath) + ["--endpoint", "tcp://:5570"])
            #expect(fromFlag.status == 78, "\(fromFlag.log)")
            #expect(fromFlag.log.contains("key 'coordinator.endpoint'"), "\(fromFlag.log)")

            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, endpoint: "tcp://127.0.0.1:99999")
            let fromFile = try await Self.run(cluster, executable, Self.arguments(executable, config: cluster.configPath))
            #expect(fromFile.status == 78, "\(fromFile.log)")
            #expect(fromFile.log.contains("\(cluster.configPath): key 'coordinator.endpoint'"), "\(fromFile.log)")
        }
    }

    @Test("a missing configuration file exits 78 saying 'no such file: PATH'", arguments: ["test-coordinator", "test-worker"])
    func missingFile(executable: String) async throws {
        try await ClusterFixture.with("missing-file") { cluster in
            let path = cluster.directory.appendingPathComponent("nowhere.json").path
            let result = try await Self.run(cluster, executable, Self.arguments(executable, config: path))
            #expect(result.status == 78)
            #expect(result.log.contains("no such file: \(path)"), "\(result.log)")
            #expect(!result.log.contains("couldn’t be opened") && !result.log.contains("NSCocoaErrorDomain"), "\(result.log)")
        }
    }

    @Test("a file that is not JSON exits 78 naming the line and column of the mistake", arguments: ["test-coordinator", "test-worker"])
    func badJSON(executable: String) async throws {
        try await ClusterFixture.with("bad-json") { cluster in
            let path = cluster.directory.appendingPathComponent("bad.json").path
            // Line 3: an endpoint without its quotes, from column 17.
            try Data("{\n  \"coordinator\": {\n    \"endpoint\": ipc:///tmp/x\n  }\n}\n".utf8).write(to: URL(fileURLWithPath: path))
            let result = try await Self.run(cluster, executable, Self.arguments(executable, config: path))
            #expect(result.status == 78)
            #expect(result.log.contains("invalid JSON at line 3, column 17: expected a value"), "\(result.log)")
        }
    }

    @Test("a worker name the file does not list exits 78 naming the listed workers, instead of joining pool 'default'")
    func unlistedWorkerName() async throws {
        try await ClusterFixture.with("unlisted-name") { cluster in
            let result = try await Self.run(cluster, "test-worker", ["--config", cluster.configPath, "--name", "worker-9"])
            #expect(result.status == 78, "\(result.log)")
            #expect(result.log.contains(#"an entry named "worker-9""#) && result.log.contains("listed: worker-1, worker-2"), "\(result.log)")
            let fromEnvironment = try await Self.run(
                cluster, "test-worker", ["--config", cluster.configPath], environment: ["WORKFLOW_WORKER_NAME": "wroker-1"])
            #expect(fromEnvironment.status == 78, "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains(#""wroker-1""#), "\(fromEnvironment.log)")
        }
    }

    @Test("a malformed allowed origin (gateway.allowed_origins) stops the coordinator with exit 78 naming the key and the value")
    func malformedAllowedOrigin() async throws {
        try await ClusterFixture.with("bad-origin") { cluster in
            let fromFlag = try await Self.run(
                cluster, "test-coordinator", ["--config", cluster.configPath, "--gateway-allowed-origins", "http://page.test/app"])
            #expect(fromFlag.status == 78, "\(fromFlag.log)")
            #expect(fromFlag.log.contains("gateway.allowed_origins") && fromFlag.log.contains(#""http://page.test/app""#), "\(fromFlag.log)")
            let fromEnvironment = try await Self.run(
                cluster, "test-coordinator", ["--config", cluster.configPath], environment: ["WORKFLOW_GATEWAY_ALLOWED_ORIGINS": "*"])
            #expect(fromEnvironment.status == 78, "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains("gateway.allowed_origins"), "\(fromEnvironment.log)")
        }
    }

    @Test("a placement naming a worker the file does not list exits 78, also when the file lists no workers at all")
    func placementOfUnknownWorker() async throws {
        try await ClusterFixture.with("unknown-placement") { cluster in
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, workers: [])
            let result = try await Self.run(cluster, "test-coordinator", ["--config", cluster.configPath])
            #expect(result.status == 78, "\(result.log)")
            #expect(result.log.contains("key 'placement[0].worker'") && result.log.contains("none is listed"), "\(result.log)")
        }
    }

    @Test("a coordinator whose port is taken exits 1 saying 'ENDPOINT is already in use', not an errno")
    func portInUse() async throws {
        try await ClusterFixture.with("port-in-use") { cluster in
            let holder = try TCPPortHolder()
            defer { holder.close() }
            let endpoint = "tcp://127.0.0.1:\(holder.port)"
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, endpoint: endpoint)
            let result = try await Self.run(cluster, "test-coordinator", ["--config", cluster.configPath])
            #expect(result.status == 1, "\(result.log)")
            #expect(result.log.contains("\(endpoint) is already in use"), "\(result.log)")
            #expect(!result.log.contains("ZMQError"), "\(result.log)")
        }
    }
}

/// A loopback TCP port held by a listening socket for the test's duration (so a daemon binding
/// it finds it in use). The kernel picks the port.
final class TCPPortHolder: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 1) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
