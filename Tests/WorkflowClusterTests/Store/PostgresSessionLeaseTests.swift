import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster

/// The per-session leases of spread sessions, against a private PostgreSQL server: one owner per
/// session at a time, a token that rises with every new owner, a deposed owner's commits refused,
/// and every lease of a coordinator renewed by one statement.
@Suite("PostgreSQL session leases")
struct PostgresSessionLeaseTests {
    /// Runs `body` with two connections to one fresh database, each fencing sessions by lease.
    static func withStores(_ body: (PostgresCoordinatorStore, PostgresCoordinatorStore) async throws -> Void) async throws {
        try await StoreBackend.postgres.withEmptyStore("session-lease") { section in
            let url = try #require(section["url"])
            var stores: [PostgresCoordinatorStore] = []
            do {
                for _ in 0..<2 { stores.append(try await PostgresCoordinatorStore.open(url: url, fencesSessionsByLease: true)) }
                try await body(stores[0], stores[1])
            } catch {
                for store in stores { await store.close() }
                throw error
            }
            for store in stores { await store.close() }
        }
    }

    static func checkpoint(_ id: SessionID, _ number: Int64, _ text: String) -> CoordinatorCheckpoint {
        CoordinatorCheckpoint(
            scope: .session(id), origin: SessionOrigin(root: "board", props: nil), number: number, renderingSequence: UInt64(number),
            acceptedEvents: number, snapshot: Data(text.utf8))
    }

    static func token(_ attempt: SessionLeaseAttempt) throws -> FencingToken {
        guard case .acquired(let token) = attempt else { throw Failure(description: "not acquired: \(attempt)") }
        return token
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func isFenced(_ error: any Error) -> Bool {
        if case .fenced = error as? CoordinatorStoreError { true } else { false }
    }

    @Test("a created session's lease keeps others out (they see its gateway); given up, another takes it with a higher token and the old owner's commits are refused")
    func ownershipAndFencing() async throws {
        try await Self.withStores { a, b in
            let id = SessionID.random()
            #expect(try await b.acquireSessionLease(id, holder: "b", gateway: "http://b", for: .seconds(60), creating: false) == .noSuchSession)
            let first = try Self.token(try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: true))
            try await a.commit(Self.checkpoint(id, 1, "a1"), fencedBy: first)
            #expect(
                try await b.acquireSessionLease(id, holder: "b", gateway: "http://b", for: .seconds(60), creating: false)
                    == .heldBy(holder: "a", gateway: "http://a"))
            // Asking again for a lease it holds keeps its token.
            #expect(try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: false) == .acquired(first))

            try await a.releaseSessionLease(id, token: first)
            let second = try Self.token(try await b.acquireSessionLease(id, holder: "b", gateway: "http://b", for: .seconds(60), creating: false))
            #expect(second > first)
            #expect(try await b.latestCheckpoint(of: .session(id))?.snapshot == Data("a1".utf8))
            await #expect { try await a.commit(Self.checkpoint(id, 2, "a2 deposed"), fencedBy: first) } throws: { Self.isFenced($0) }
            await #expect { try await a.remove(.session(id), fencedBy: first) } throws: { Self.isFenced($0) }
            try await b.commit(Self.checkpoint(id, 2, "b2"), fencedBy: second)
            #expect(try await a.latestCheckpoint(of: .session(id))?.snapshot == Data("b2".utf8))
            // Releasing with a stale token changes nothing.
            try await a.releaseSessionLease(id, token: first)
            #expect(
                try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: false)
                    == .heldBy(holder: "b", gateway: "http://b"))

            // Ended by its owner: checkpoint and lease gone, a late commit with any token refused.
            try await b.remove(.session(id), fencedBy: second)
            #expect(try await a.latestCheckpoint(of: .session(id)) == nil)
            #expect(try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: false) == .noSuchSession)
            await #expect { try await b.commit(Self.checkpoint(id, 3, "b3 after the end"), fencedBy: second) } throws: { Self.isFenced($0) }
        }
    }

    @Test("one renewal answers every lease its holder still holds; one taken over is missing from it")
    func renewalInOneStatement() async throws {
        try await Self.withStores { a, b in
            let ids = (0..<5).map { _ in SessionID.random() }
            var tokens: [SessionID: FencingToken] = [:]
            for id in ids {
                let token = try Self.token(try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: true))
                try await a.commit(Self.checkpoint(id, 1, "a"), fencedBy: token)
                tokens[id] = token
            }
            #expect(try await a.renewSessionLeases(holder: "a", for: .seconds(60)) == tokens)
            // One given up and taken by b: a's next renewal no longer holds it.
            let moved = ids[2]
            try await a.releaseSessionLease(moved, token: tokens[moved]!)
            let taken = try Self.token(try await b.acquireSessionLease(moved, holder: "b", gateway: "http://b", for: .seconds(60), creating: false))
            var expected = tokens
            expected[moved] = nil
            #expect(try await a.renewSessionLeases(holder: "a", for: .seconds(60)) == expected)
            #expect(try await b.renewSessionLeases(holder: "b", for: .seconds(60)) == [moved: taken])
        }
    }

    @Test("a lease given up stays given up: its former holder's next renewal does not revive it, so another coordinator can take it")
    func givenUpIsNotRenewed() async throws {
        try await Self.withStores { a, b in
            let id = SessionID.random()
            let token = try Self.token(try await a.acquireSessionLease(id, holder: "a", gateway: "http://a", for: .seconds(60), creating: true))
            try await a.commit(Self.checkpoint(id, 1, "a"), fencedBy: token)
            try await a.releaseSessionLease(id, token: token)
            #expect(try await a.renewSessionLeases(holder: "a", for: .seconds(60)) == [:], "a renewal revived a given-up lease")
            let taken = try await b.acquireSessionLease(id, holder: "b", gateway: "http://b", for: .seconds(60), creating: false)
            #expect(try Self.token(taken).rawValue > token.rawValue)
        }
    }
}
