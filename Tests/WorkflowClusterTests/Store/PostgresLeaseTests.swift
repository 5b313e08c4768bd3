import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster

/// The lease on the shared store, against a private PostgreSQL server: one leader at a time, a
/// token that rises with every new leader, and a replaced or stepped-down leader's writes refused.
@Suite("PostgreSQL store lease")
struct PostgresLeaseTests {
    /// Runs `body` with `count` connections to one fresh database.
    static func withStores(_ count: Int, _ body: ([PostgresCoordinatorStore]) async throws -> Void) async throws {
        try await StoreBackend.postgres.withEmptyStore("lease") { section in
            let url = try #require(section["url"])
            var stores: [PostgresCoordinatorStore] = []
            do {
                for _ in 0..<count { stores.append(try await PostgresCoordinatorStore.open(url: url)) }
                try await body(stores)
            } catch {
                for store in stores { await store.close() }
                throw error
            }
            for store in stores { await store.close() }
        }
    }

    static func acquired(_ attempt: LeaseAttempt) throws -> CoordinatorLease {
        guard case .acquired(let lease) = attempt else { throw LeaseFailure(description: "not acquired: \(attempt)") }
        return lease
    }

    struct LeaseFailure: Error, CustomStringConvertible {
        var description: String
    }

    @Test("a live lease keeps a standby out; once it is given up the standby leads with a higher token and the old leader is refused")
    func stepDownHandsOver() async throws {
        try await Self.withStores(2) { stores in
            let (leader, standby) = (stores[0], stores[1])
            let first = try Self.acquired(try await leader.acquireLease(holder: "a", for: .seconds(60)))
            #expect(first.holder == "a")
            try await leader.commit(CoordinatorStoreContractTests.checkpoint(1, "a"), fencedBy: first.token)

            guard case .heldBy(let seen) = try await standby.acquireLease(holder: "b", for: .seconds(60)) else {
                Issue.record("the standby took a live lease")
                return
            }
            #expect(seen.holder == "a" && seen.token == first.token && seen.expiresAt == first.expiresAt)

            try await leader.stepDown(first)
            await #expect {
                try await leader.commit(CoordinatorStoreContractTests.checkpoint(2, "a after stepping down"), fencedBy: first.token)
            } throws: { error in
                if case .fenced = error as? CoordinatorStoreError { true } else { false }
            }
            let second = try Self.acquired(try await standby.acquireLease(holder: "b", for: .seconds(60)))
            #expect(second.token > first.token)
            #expect(try await standby.latestCheckpoint() == CoordinatorStoreContractTests.checkpoint(1, "a"))
            try await standby.commit(CoordinatorStoreContractTests.checkpoint(2, "b"), fencedBy: second.token)
            await #expect {
                _ = try await leader.renewLease(first, for: .seconds(60))
            } throws: { error in
                guard case .fenced(_, let offered, let current) = error as? CoordinatorStoreError else { return false }
                return offered == first.token && current == second.token
            }
            // Giving up a lease one no longer holds changes nothing.
            try await leader.stepDown(first)
            try await standby.commit(CoordinatorStoreContractTests.checkpoint(3, "b"), fencedBy: second.token)
        }
    }

    @Test("an expired lease is taken over without the old leader; its late writes and renewal are refused")
    func expiredLeaseIsTakenOver() async throws {
        try await Self.withStores(2) { stores in
            let (stalled, standby) = (stores[0], stores[1])
            // A lease of no duration has run out by the next statement: the leader that took it
            // is, from then on, a leader that stalled past its expiry.
            let old = try Self.acquired(try await stalled.acquireLease(holder: "stalled", for: .zero))
            let new = try Self.acquired(try await standby.acquireLease(holder: "standby", for: .seconds(60)))
            #expect(new.token > old.token)
            #expect(new.expiresAt > old.expiresAt)
            await #expect {
                try await stalled.commit(CoordinatorStoreContractTests.checkpoint(1, "late"), fencedBy: old.token)
            } throws: { error in
                if case .fenced = error as? CoordinatorStoreError { true } else { false }
            }
            await #expect {
                _ = try await stalled.renewLease(old, for: .seconds(60))
            } throws: { error in
                if case .fenced = error as? CoordinatorStoreError { true } else { false }
            }
            #expect(try await standby.latestCheckpoint() == nil)
        }
    }

    @Test("renewing extends the lease and keeps its token; validUntil is counted from before the request")
    func renewalExtends() async throws {
        try await Self.withStores(1) { stores in
            let store = stores[0]
            let before = ContinuousClock.now
            let lease = try Self.acquired(try await store.acquireLease(holder: "a", for: .seconds(30)))
            #expect(lease.validUntil >= before + .seconds(30))
            #expect(lease.validUntil <= ContinuousClock.now + .seconds(30))
            let renewed = try await store.renewLease(lease, for: .seconds(120))
            #expect(renewed.token == lease.token && renewed.holder == "a")
            #expect(renewed.expiresAt > lease.expiresAt)
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "a"), fencedBy: renewed.token)
        }
    }

    @Test("of eight coordinators racing for a free lease exactly one gets it; the others see it held by that one")
    func oneOfManyAcquires() async throws {
        try await Self.withStores(8) { stores in
            let attempts = try await withThrowingTaskGroup(of: LeaseAttempt.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask { try await store.acquireLease(holder: "c\(index)", for: .seconds(60)) }
                }
                return try await group.reduce(into: [LeaseAttempt]()) { $0.append($1) }
            }
            let winners = attempts.compactMap { attempt -> CoordinatorLease? in
                if case .acquired(let lease) = attempt { lease } else { nil }
            }
            try #require(winners.count == 1, "\(attempts)")
            for attempt in attempts {
                if case .heldBy(let seen) = attempt {
                    #expect(seen.holder == winners[0].holder && seen.token == winners[0].token)
                }
            }
        }
    }

    @Test("a writer without a lease (acquireWriter) can be taken over by a lease, and the lease by a writer: each raises the token")
    func writerAndLeaseShareTheToken() async throws {
        try await Self.withStores(2) { stores in
            let writer = try await stores[0].acquireWriter(holder: "plain")
            let lease = try Self.acquired(try await stores[1].acquireLease(holder: "leader", for: .seconds(60)))
            #expect(lease.token > writer)
            let later = try await stores[0].acquireWriter(holder: "plain again")
            #expect(later > lease.token)
            await #expect {
                _ = try await stores[1].renewLease(lease, for: .seconds(60))
            } throws: { error in
                if case .fenced = error as? CoordinatorStoreError { true } else { false }
            }
        }
    }
}
