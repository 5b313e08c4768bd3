import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster
import ZeroMQ
import WorkflowClusterTesting

/// CURVE configured from files: keygen, a secured cluster, the allow-list, secret-file
/// permissions, and secrets kept out of every log.
@Suite("Cluster security")
struct ClusterSecurityTests {
    /// Runs `keygen` into the fixture's `keys` directory for both demo workers.
    @discardableResult
    static func keygen(_ cluster: ClusterFixture) async throws -> DaemonProcess {
        let keygen = try cluster.start(
            "test-coordinator", ["keygen", "--dir", cluster.keysDirectory, "--workers", "worker-1,worker-2"], label: "keygen")
        #expect(try await keygen.waitForExit() == 0)
        return keygen
    }

    /// The Z85 text of every secret key file keygen wrote.
    static func secrets(_ cluster: ClusterFixture) throws -> [String] {
        let keys = cluster.keysDirectory
        return try ["\(keys)/coordinator.key", "\(keys)/workers/worker-1.key", "\(keys)/workers/worker-2.key"].map {
            try String(contentsOfFile: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test("keygen writes 0600 secret files, public files and a matching allow-list, printing public keys only")
    func keygenWritesKeys() async throws {
        try await ClusterFixture.with("keygen") { cluster in
            let keygen = try await Self.keygen(cluster)
            let keys = cluster.keysDirectory
            for secret in ["coordinator.key", "workers/worker-1.key", "workers/worker-2.key"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: "\(keys)/\(secret)")
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(secret) is not mode 0600")
            }
            let workerKeys = try ["worker-1", "worker-2"].map { try CurveKeyFiles.publicKey(file: "\(keys)/workers/\($0).pub") }
            #expect(try CurveKeyFiles.allowList(file: "\(keys)/allowed-workers") == Set(workerKeys))
            for name in ["worker-1", "worker-2"] {
                let pair = try CurveKeyFiles.keyPair(secretFile: "\(keys)/workers/\(name).key")
                #expect(try pair.publicKey == CurveKeyFiles.publicKey(file: "\(keys)/workers/\(name).pub"))
            }
            let printed = keygen.stdout.lines.joined(separator: "\n")
            #expect(printed.contains(workerKeys[0].z85))
            for secret in try Self.secrets(cluster) { #expect(!printed.contains(secret), "keygen printed a secret key") }
        }
    }

    @Test("a CURVE cluster configured from key files renders the demo tree, and no secret reaches any log")
    func curveClusterRenders() async throws {
        try await ClusterFixture.with("curve") { cluster in
            try await Self.keygen(cluster)
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            let coordinator = try await cluster.startCoordinator(["--log-level", "debug"])
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the tree over CURVE", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            try await coordinator.stderr.first("the coordinator to log its security mode") { $0.contains("security=curve") }
            let output = cluster.allOutput
            for secret in try Self.secrets(cluster) { #expect(!output.contains(secret), "a secret key reached a daemon's output") }
        }
    }

    @Test("a worker whose public key is not in the allow-list never joins; the coordinator logs the refusal")
    func unlistedWorkerNeverJoins() async throws {
        try await ClusterFixture.with("unlisted") { cluster in
            try await Self.keygen(cluster)
            let keys = cluster.keysDirectory
            let listed = try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-1.pub")
            let unlisted = try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-2.pub")
            try Data("# worker-2 removed\n\(listed.z85)  # worker-1\n".utf8).write(to: URL(fileURLWithPath: "\(keys)/allowed-workers"))
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            try await coordinator.stdout.first("the message pane unavailable", where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
            let worker2 = try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-2"], label: "worker-2")
            try await coordinator.stderr.first("the refusal of worker-2's key") {
                $0.contains("refused a worker whose key is not allowed") && $0.contains(unlisted.z85)
            }
            #expect(worker2.isRunning)
            #expect(!worker2.stderr.lines.contains { $0.contains("welcomed by the parent") })
            #expect(!coordinator.stderr.lines.contains { $0.contains("worker joined") && $0.contains("worker-2") })
            #expect(!coordinator.stdout.lines.contains(where: StatusLine.matching("DetailPaneWorkflow", "running")))
        }
    }

    @Test("a secret key file readable by others is rejected at start, naming the file and the expected mode")
    func wideSecretRejected() async throws {
        try await ClusterFixture.with("wide") { cluster in
            try await Self.keygen(cluster)
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            let secretFile = "\(cluster.keysDirectory)/coordinator.key"
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: secretFile)
            let coordinator = try cluster.start("test-coordinator", ["--config", cluster.configPath], label: "coordinator")
            #expect(try await coordinator.waitForExit() == 78)
            let message = coordinator.stderr.lines.joined(separator: "\n")
            #expect(message.contains(secretFile) && message.contains("0600") && message.contains("0644"), "\(message)")

            try FileManager.default.removeItem(atPath: "\(cluster.keysDirectory)/workers/worker-2.key")
            let worker = try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-2"], label: "worker-2")
            #expect(try await worker.waitForExit() == 78)
            let workerMessage = worker.stderr.lines.joined(separator: "\n")
            #expect(workerMessage.contains("worker-2.key") && workerMessage.contains("no such file"), "\(workerMessage)")
        }
    }
}
