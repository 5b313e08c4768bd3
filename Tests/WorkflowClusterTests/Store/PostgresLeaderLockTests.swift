import ClusterTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// The leader's advisory lock on the PostgreSQL store, against a private server: a standby takes
/// the lease before it runs out when, and only when, the leader's lease connection is gone.
@Suite("PostgreSQL store: the leader's lock")
struct PostgresLeaderLockTests {
    /// How the leader's lease connection goes away.
    enum Loss: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The leader's side closes it (as a killed process's socket closes).
        case closedByLeader
        /// The database ends its backend (`pg_terminate_backend`).
        case terminated

        var testDescription: String { rawValue }
    }

    @Test("a standby takes a live lease at once when the leader's lease connection is gone; the old leader is refused", arguments: Loss.allCases)
    func lostConnectionHandsOver(_ loss: Loss) async throws {
        try await Self.withStores(2) { stores, admin in
            let (leader, standby) = (stores[0], stores[1])
            let old = try PostgresLeaseTests.acquired(try await leader.acquireLease(holder: "leader", for: .seconds(600)))
            try await leader.commit(CoordinatorStoreContractTests.checkpoint(1, "leader"), fencedBy: old.token)
            switch loss {
            // Closed when `close()` returns (and its event loop shut down with it).
            case .closedByLeader: await leader.close()
            case .terminated:
                try await admin.run("SELECT pg_terminate_backend(lease_backend_pid) FROM coordinator_writer WHERE id = 1")
                // What makes a live leader step down (`leaseConnectionLost`).
                try await leader.leaseConnectionClosed.get()
            }

            let new = try await Self.polledUntilAcquired(standby, holder: "standby")
            #expect(new.token > old.token)
            #expect(try await admin.value(Bool.self, "SELECT now() < \(old.expiresAt)"), "taken only after the old lease ran out")
            #expect(try await standby.latestCheckpoint() == CoordinatorStoreContractTests.checkpoint(1, "leader"))
            if loss == .terminated {
                await #expect {
                    try await leader.commit(CoordinatorStoreContractTests.checkpoint(2, "late"), fencedBy: old.token)
                } throws: { error in
                    if case .fenced = error as? CoordinatorStoreError { true } else { false }
                }
            }
            try await standby.commit(CoordinatorStoreContractTests.checkpoint(2, "standby"), fencedBy: new.token)
        }
    }

    @Test("while the leader's lease connection lives (a frozen leader), a standby does not take the lease and does not keep the lock")
    func liveConnectionKeepsTheLease() async throws {
        try await Self.withStores(2) { stores, admin in
            let (leader, standby) = (stores[0], stores[1])
            let lease = try PostgresLeaseTests.acquired(try await leader.acquireLease(holder: "leader", for: .seconds(600)))
            let leaderBackend = try await admin.value(Int32?.self, "SELECT lease_backend_pid FROM coordinator_writer WHERE id = 1")
            #expect(leaderBackend != nil, "the leader took the lease without the lock")
            for _ in 0..<5 {
                guard case .heldBy(let seen) = try await standby.acquireLease(holder: "standby", for: .seconds(600)) else {
                    Issue.record("the standby took a live lease whose leader's connection lives")
                    return
                }
                #expect(seen.token == lease.token)
            }
            #expect(try await Self.lockHolders(admin) == [try #require(leaderBackend)])
            let renewed = try await leader.renewLease(lease, for: .seconds(600))
            #expect(renewed.token == lease.token)
            try await leader.commit(CoordinatorStoreContractTests.checkpoint(1, "leader"), fencedBy: renewed.token)
        }
    }

    @Test("a leader that took over by expiry ends the replaced leader's connection, takes the lock, and is replaced at once when its own is gone")
    func expiryTakeoverTakesTheLockForTheNextFailover() async throws {
        try await Self.withStores(3) { stores, admin in
            let (stalled, second, third) = (stores[0], stores[1], stores[2])
            // A lease of no duration has run out by the next statement: its leader, still
            // connected and holding the lock, is a leader that stalled past its expiry.
            let old = try PostgresLeaseTests.acquired(try await stalled.acquireLease(holder: "stalled", for: .zero))
            let new = try PostgresLeaseTests.acquired(try await second.acquireLease(holder: "second", for: .seconds(600)))
            #expect(new.token > old.token)
            #expect(try await admin.value(Int32?.self, "SELECT lease_backend_pid FROM coordinator_writer WHERE id = 1") == nil)
            // The takeover ended the stalled leader's lease connection, which frees the lock.
            try await stalled.leaseConnectionClosed.get()
            try await withSafetyTimeout("the stalled leader's backend to end") {
                while try await !Self.lockHolders(admin).isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            }
            // A standby that gets the free lock does not take a lease whose leader never held it,
            // and leaves the lock for that leader.
            guard case .heldBy = try await third.acquireLease(holder: "third", for: .seconds(600)) else {
                Issue.record("a standby took a live lease from a leader that never held the lock")
                return
            }
            #expect(try await Self.lockHolders(admin).isEmpty)
            let renewed = try await second.renewLease(new, for: .seconds(600))
            let secondBackend = try #require(try await admin.value(Int32?.self, "SELECT lease_backend_pid FROM coordinator_writer WHERE id = 1"))
            #expect(try await Self.lockHolders(admin) == [secondBackend])
            guard case .heldBy = try await third.acquireLease(holder: "third", for: .seconds(600)) else {
                Issue.record("a standby took a live lease whose leader's connection lives")
                return
            }

            try await admin.run("SELECT pg_terminate_backend(\(secondBackend))")
            try await second.leaseConnectionClosed.get()
            let last = try await Self.polledUntilAcquired(third, holder: "third")
            #expect(last.token > renewed.token)
            #expect(try await admin.value(Bool.self, "SELECT now() < \(renewed.expiresAt)"), "taken only after the lease ran out")
        }
    }

    /// Runs `body` with `count` stores opened as coordinators sharing the store open them (a
    /// lease connection each) on one fresh database, and a session of the test's own.
    static func withStores(_ count: Int, _ body: ([PostgresCoordinatorStore], Admin) async throws -> Void) async throws {
        try await StoreBackend.postgres.withEmptyStore("leader-lock") { section in
            let url = try #require(section["url"])
            let logger = Logger(label: "test.leader-lock")
            let admin = Admin(connection: try await PostgresConnection.connect(configuration: try SlowAcquisitionTests.configuration(url), id: 9, logger: logger), logger: logger)
            var stores: [PostgresCoordinatorStore] = []
            do {
                for _ in 0..<count { stores.append(try await PostgresCoordinatorStore.open(url: url, leaseConnection: true)) }
                try await body(stores, admin)
            } catch {
                for store in stores { await store.close() }
                try? await admin.connection.close()
                throw error
            }
            for store in stores { await store.close() }
            try? await admin.connection.close()
        }
    }

    /// The lease `store` takes by asking as a standby polls (a 600 s lease each time): the old
    /// leader's backend ends a moment after its connection closes. Ends long before a live lease
    /// of 600 s could run out.
    static func polledUntilAcquired(_ store: PostgresCoordinatorStore, holder: String) async throws -> CoordinatorLease {
        try await withSafetyTimeout("\(holder) to take the lease") {
            while true {
                if case .acquired(let lease) = try await store.acquireLease(holder: holder, for: .seconds(600)) { return lease }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The backends holding the leader's lock.
    static func lockHolders(_ admin: Admin) async throws -> [Int32] {
        try await admin.values(
            Int32.self,
            """
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 2003198828
                AND objid = 'coordinator_writer'::regclass::oid AND objsubid = 1
            """)
    }

    /// The test's own session on the server.
    struct Admin: Sendable {
        let connection: PostgresConnection
        let logger: Logger

        func run(_ query: PostgresQuery) async throws {
            for try await _ in try await connection.query(query, logger: logger) {}
        }

        func values<Value: PostgresDecodable & Sendable>(_: Value.Type, _ query: PostgresQuery) async throws -> [Value] {
            var values: [Value] = []
            for try await value in try await connection.query(query, logger: logger).decode(Value.self) { values.append(value) }
            return values
        }

        func value<Value: PostgresDecodable & Sendable>(_ type: Value.Type, _ query: PostgresQuery) async throws -> Value {
            try #require(try await values(type, query).first)
        }
    }
}
