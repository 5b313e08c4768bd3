import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// The private server the PostgreSQL store tests run against. Where none can be started, this
/// suite is skipped with the reason, which the console shows (the `postgres` cases of the
/// parameterised store tests are cancelled with it, which it does not).
@Suite(
    "Private PostgreSQL server", .enabled(if: PrivatePostgres.unavailableReason == nil, Comment(rawValue: PrivatePostgres.unavailableReason ?? "")))
struct PrivatePostgresTests {
    @Test("a private server starts, serves a store over its unix socket, and is gone with its directory afterwards")
    func startsAndIsRemoved() async throws {
        let directory = try await PrivatePostgres.with { server in
            let store = try await PostgresCoordinatorStore.open(url: server.url)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "x"), fencedBy: token)
            await store.close()
            #expect(FileManager.default.fileExists(atPath: server.directory.appendingPathComponent(".s.PGSQL.\(server.port)").path))
            return server.directory
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("the server and its directory are removed when the test's body throws")
    func removedOnFailure() async throws {
        struct Thrown: Error {}
        var directory: URL?
        await #expect(throws: Thrown.self) {
            try await PrivatePostgres.with { server in
                directory = server.directory
                throw Thrown()
            }
        }
        let gone = try #require(directory)
        #expect(!FileManager.default.fileExists(atPath: gone.path))
    }
}
