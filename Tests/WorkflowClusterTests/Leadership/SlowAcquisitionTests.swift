import ClusterTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// A standby whose acquisition of the lease waited on the database for longer than the lease
/// (a row lock a dying leader's transaction still held, a loaded server), against a private
/// PostgreSQL server.
@Suite("Leadership: a slow acquisition")
struct SlowAcquisitionTests {
    @Test("a lease taken after a wait that used up its term is renewed before leading, not led on for an instant and given up")
    func slowAcquisitionRenewsBeforeLeading() async throws {
        try await StoreBackend.postgres.withEmptyStore("slow-acquire") { section in
            let url = try #require(section["url"])
            let store = try await PostgresCoordinatorStore.open(url: url)
            let logger = Logger(label: "test.slow-acquire")
            let blocker = try await PostgresConnection.connect(configuration: try Self.configuration(url), id: 2, logger: logger)
            do {
                // The writer row exists, with no live lease; another session holds it locked.
                let old = try PostgresLeaseTests.acquired(try await store.acquireLease(holder: "old", for: .seconds(60)))
                try await store.stepDown(old)
                try await blocker.query("BEGIN", logger: logger)
                try await blocker.query("SELECT fencing_token FROM coordinator_writer WHERE id = 1 FOR UPDATE", logger: logger)

                // Long enough that a loaded machine's stall between the renewal and the check below
                // (up to four fifths of it) does not pass the deadline.
                let schedule = LeaseSchedule(lease: .seconds(4))
                let leadership = CoordinatorLeadership(
                    store: store, storeName: "test", holder: "new", schedule: schedule, logger: logger, onStepDown: { _ in })
                let acquiring = Task { try await leadership.acquire() }
                try await withSafetyTimeout("the acquisition to wait on the locked row") {
                    while try await Self.waitingLocks(blocker, logger) == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
                // The slow database itself: the acquisition waits a whole lease.
                try await Task.sleep(for: schedule.lease)
                try await blocker.query("COMMIT", logger: logger)

                let lease = try await acquiring.value
                #expect(lease.holder == "new")
                #expect(schedule.deadline(of: lease) > .now, "led on a lease already at its deadline")
            } catch {
                try? await blocker.close()
                await store.close()
                throw error
            }
            try? await blocker.close()
            await store.close()
        }
    }

    /// How many lock requests wait on the server.
    static func waitingLocks(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        var count: Int64 = 0
        for try await value in try await connection.query("SELECT count(*) FROM pg_locks WHERE NOT granted", logger: logger).decode(Int64.self) {
            count = value
        }
        return count
    }

    /// A connection to the private server `url` names (its unix socket).
    static func configuration(_ url: String) throws -> PostgresConnection.Configuration {
        let items = URLComponents(string: url)?.queryItems ?? []
        let directory = try #require(items.first { $0.name == "host" }?.value)
        let port = try #require(items.first { $0.name == "port" }?.value)
        return .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: "postgres", password: nil, database: "postgres")
    }
}
