import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster
import ZeroMQ
import WorkflowClusterTesting

/// CURVE as the default on tcp, and `keygen --config` as the one step that enables it: the keys
/// land where the configuration looks for them, and rerunning it never replaces a key.
@Suite("Cluster security defaults")
struct ClusterDefaultSecurityTests {
    /// Runs `workflow-coordinator keygen --config` on the fixture's configuration.
    @discardableResult
    static func keygen(_ cluster: ClusterFixture, expecting status: Int32 = 0) async throws -> DaemonProcess {
        let keygen = try cluster.start("test-coordinator", ["keygen", "--config", cluster.configPath], label: "keygen")
        #expect(try await keygen.waitForExit() == status, "\(keygen.stderr.lines.joined(separator: "\n"))")
        return keygen
    }

    /// Every file under the fixture's keys directory, by path relative to it, with its bytes.
    static func keyFiles(_ cluster: ClusterFixture) throws -> [String: Data] {
        let root = cluster.keysDirectory
        var files: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: root) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: "\(root)/\(name)", isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[name] = FileManager.default.contents(atPath: "\(root)/\(name)")
        }
        return files
    }

    @Test("a tcp cluster whose config says nothing about security runs CURVE: no keys, no start; after keygen --config, workers join encrypted")
    func tcpDefaultsToCurve() async throws {
        try await ClusterFixture.with("tcp-default") { cluster in
            // Port * lets the coordinator pick a free port (nothing can collide); it reports it.
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: nil, endpoint: "tcp://127.0.0.1:*")
            let refused = try cluster.start("test-coordinator", ["--config", cluster.configPath], label: "coordinator-without-keys")
            #expect(try await refused.waitForExit() == 78)
            let message = refused.stderr.lines.joined(separator: "\n")
            #expect(message.contains("coordinator.key") && message.contains("keygen --config"), "\(message)")

            let keygen = try await Self.keygen(cluster)
            #expect(keygen.stdout.lines.contains { $0.contains("wrote") && $0.hasSuffix("keys/workers/worker-2.key") })

            let coordinator = try await cluster.startCoordinator()
            let listening = try await coordinator.stdout.first("the listening line") { $0.contains(#""event":"listening""#) }
            let endpoint = try #require(
                try JSONDecoder().decode([String: String].self, from: Data(listening.utf8))["endpoint"])
            #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && !endpoint.hasSuffix(":*"))
            try await coordinator.stderr.first("the coordinator to log CURVE") { $0.contains("coordinator listening") && $0.contains("security=curve") }
            let worker = try await cluster.startWorker("worker-1", ["--endpoint", endpoint])
            try await cluster.startWorker("worker-2", ["--endpoint", endpoint])
            try await coordinator.stdout.first("the tree over default CURVE", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            #expect(worker.stderr.lines.contains { $0.contains("security=curve") })
        }
    }

    @Test("keygen --config keeps every existing key, admits a newly listed worker, and refuses a public key without its secret")
    func keygenOnlyAddsWhatIsMissing() async throws {
        try await ClusterFixture.with("keygen-rerun") { cluster in
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ["mode": "curve"])
            try await Self.keygen(cluster)
            let first = try Self.keyFiles(cluster)
            #expect(Set(first.keys) == [
                "coordinator.key", "coordinator.pub", "allowed-workers",
                "workers/worker-1.key", "workers/worker-1.pub", "workers/worker-2.key", "workers/worker-2.pub",
            ])

            let again = try await Self.keygen(cluster)
            #expect(try Self.keyFiles(cluster) == first, "a rerun changed a key file")
            #expect(!again.stdout.lines.contains { $0.hasPrefix("wrote") })
            #expect(again.stdout.lines.contains { $0.hasPrefix("kept") && $0.hasSuffix("coordinator.key") })

            try cluster.writeConfig(
                placement: ClusterFixture.demoPlacement, security: ["mode": "curve"],
                workers: ClusterFixture.demoWorkers + [["name": "worker-3", "pool": "details"]])
            try await Self.keygen(cluster)
            let third = try Self.keyFiles(cluster)
            for (name, bytes) in first where name != "allowed-workers" { #expect(third[name] == bytes, "\(name) changed") }
            let keys = cluster.keysDirectory
            let allowed = try CurveKeyFiles.allowList(file: "\(keys)/allowed-workers")
            let expected = try (1...3).map { try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-\($0).pub") }
            #expect(allowed == Set(expected))
            #expect(try CurveKeyFiles.keyPair(secretFile: "\(keys)/workers/worker-3.key").publicKey == expected[2])

            try FileManager.default.removeItem(atPath: "\(keys)/workers/worker-2.key")
            let orphan = try await Self.keygen(cluster, expecting: 1)
            let message = orphan.stderr.lines.joined(separator: "\n")
            #expect(message.contains("worker-2.pub") && message.contains("without its secret"), "\(message)")
            #expect(!FileManager.default.fileExists(atPath: "\(keys)/workers/worker-2.key"), "keygen replaced a pair whose public key was in use")
        }
    }
}
