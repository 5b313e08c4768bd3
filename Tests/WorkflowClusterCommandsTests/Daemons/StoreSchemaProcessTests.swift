import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// What an operator sees when a coordinator meets a store a later release has migrated: exit 78
/// and the versions in words, before anything is served (`StoreSchema`).
@Suite("Store schema at start")
struct StoreSchemaProcessTests {
    @Test("a coordinator started on a PostgreSQL store of a later schema exits 78 saying which versions, and the store is left as it was")
    func newerStoreStopsTheCoordinator() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("PostgreSQL store test skipped: \(reason)") }
        try await ClusterFixture.with("newer-schema") { cluster in
            try await PrivatePostgres.with { server in
                let store = ["--store-kind", "postgres", "--store-url", server.url]
                let first = try await cluster.startCoordinator(store)
                #expect(try await first.terminate() == 0)
                let later = StoreSchema.thisRelease.version + 1
                #expect(try await Self.psql(server, "UPDATE coordinator_schema SET version = \(later)") == "UPDATE 1")

                let refused = try await OperatorErrorTests.run(cluster, "test-coordinator", ["--config", cluster.configPath] + store)
                #expect(refused.status == 78, "\(refused.log)")
                #expect(
                    refused.log.contains("the store's schema is version \(later), newer than this coordinator's (version \(StoreSchema.thisRelease.version))"),
                    "\(refused.log)")
                #expect(try await Self.psql(server, "SELECT version FROM coordinator_schema") == "\(later)")
            }
        }
    }

    /// Runs `statement` on `server` with the `psql` command (a client of its own, as an operator's
    /// would be); returns what it printed, trimmed.
    static func psql(_ server: PrivatePostgres, _ statement: String) async throws -> String {
        let client = try DaemonProcess(
            "/usr/bin/psql",
            ["-h", server.directory.path, "-p", "\(server.port)", "-U", "postgres", "-d", "postgres", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement],
            label: "psql")
        let status = try await client.waitForExit()
        #expect(status == 0, "\(client.stderr.lines.joined(separator: "\n"))")
        return client.stdout.lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
