import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster

/// The per-session leases of spread sessions, against a private PostgreSQL server: one owner per
/// session at a time, a token that rises with every new owner, a deposed owner's commits refused,
/// and every lease of a coordinator kept by renewing its one term.
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

    /// Begins a term of `holder` on `store`, live for a minute.
    static func term(_ store: PostgresCoordinatorStore, _ holder: String) async throws -> SessionLeaseTerm {
        try await store.beginSessionLeaseTerm(holder: holder, gateway: "http://\(holder)", for: .seconds(60))
    }

    @Test("a created session's lease keeps others out (they see its gateway); given up, another takes it with a higher token and the old owner's commits are refused")
    func ownershipAndFencing() async throws {
        try await Self.withStores { a, b in
            let (termA, termB) = (try await Self.term(a, "a"), try await Self.term(b, "b"))
            let id = SessionID.random()
            #expect(try await b.acquireSessionLease(id, term: termB, creating: false) == .noSuchSession)
            let first = try Self.token(try await a.acquireSessionLease(id, term: termA, creating: true))
            try await a.commit(Self.checkpoint(id, 1, "a1"), fencedBy: first)
            #expect(try await b.acquireSessionLease(id, term: termB, creating: false) == .heldBy(holder: "a", gateway: "http://a"))
            // Asking again for a lease it holds keeps its token.
            #expect(try await a.acquireSessionLease(id, term: termA, creating: false) == .acquired(first))

            try await a.releaseSessionLease(id, token: first)
            let second = try Self.token(try await b.acquireSessionLease(id, term: termB, creating: false))
            #expect(second > first)
            #expect(try await b.latestCheckpoint(of: .session(id))?.snapshot == Data("a1".utf8))
            await #expect { try await a.commit(Self.checkpoint(id, 2, "a2 deposed"), fencedBy: first) } throws: { Self.isFenced($0) }
            await #expect { try await a.remove(.session(id), fencedBy: first) } throws: { Self.isFenced($0) }
            try await b.commit(Self.checkpoint(id, 2, "b2"), fencedBy: second)
            #expect(try await a.latestCheckpoint(of: .session(id))?.snapshot == Data("b2".utf8))
            // Releasing with a stale token changes nothing.
            try await a.releaseSessionLease(id, token: first)
            #expect(try await a.acquireSessionLease(id, term: termA, creating: false) == .heldBy(holder: "b", gateway: "http://b"))

            // Ended by its owner: checkpoint and lease gone, a late commit with any token refused.
            try await b.remove(.session(id), fencedBy: second)
            #expect(try await a.latestCheckpoint(of: .session(id)) == nil)
            #expect(try await a.acquireSessionLease(id, term: termA, creating: false) == .noSuchSession)
            await #expect { try await b.commit(Self.checkpoint(id, 3, "b3 after the end"), fencedBy: second) } throws: { Self.isFenced($0) }
        }
    }

    @Test("one renewal of a term keeps every lease taken under it; once the term ends, none is revived and others take them with higher tokens")
    func termRenewal() async throws {
        try await Self.withStores { a, b in
            let (termA, termB) = (try await Self.term(a, "a"), try await Self.term(b, "b"))
            let ids = (0..<5).map { _ in SessionID.random() }
            var tokens: [SessionID: FencingToken] = [:]
            for id in ids {
                let token = try Self.token(try await a.acquireSessionLease(id, term: termA, creating: true))
                try await a.commit(Self.checkpoint(id, 1, "a"), fencedBy: token)
                tokens[id] = token
            }
            #expect(try await a.renewSessionLeaseTerm(termA, for: .seconds(60)))
            for id in ids { #expect(try await b.acquireSessionLease(id, term: termB, creating: false) == .heldBy(holder: "a", gateway: "http://a")) }
            try await a.endSessionLeaseTerm(termA)
            #expect(try await a.renewSessionLeaseTerm(termA, for: .seconds(60)) == false, "a renewal revived an ended term")
            #expect(try await a.acquireSessionLease(ids[0], term: termA, creating: false) == .termEnded)
            for id in ids {
                let taken = try Self.token(try await b.acquireSessionLease(id, term: termB, creating: false))
                #expect(taken > tokens[id]!)
            }
        }
    }

    @Test("a new term of a holder ends its earlier one: what it held is free at once, also to itself under a higher token")
    func newTermEndsTheOld() async throws {
        try await Self.withStores { a, b in
            let old = try await Self.term(a, "a")
            let id = SessionID.random()
            let first = try Self.token(try await a.acquireSessionLease(id, term: old, creating: true))
            try await a.commit(Self.checkpoint(id, 1, "a"), fencedBy: first)
            let new = try await Self.term(a, "a")
            #expect(new.number > old.number)
            #expect(try await a.renewSessionLeaseTerm(old, for: .seconds(60)) == false)
            let again = try Self.token(try await a.acquireSessionLease(id, term: new, creating: false))
            #expect(again > first)
            await #expect { try await a.commit(Self.checkpoint(id, 2, "a under the old term"), fencedBy: first) } throws: { Self.isFenced($0) }
            #expect(try await b.acquireSessionLease(id, term: try await Self.term(b, "b"), creating: false) == .heldBy(holder: "a", gateway: "http://a"))
        }
    }

    @Test("a lease given up stays given up: its holder's next term renewal does not revive it, so another coordinator can take it")
    func givenUpIsNotRenewed() async throws {
        try await Self.withStores { a, b in
            let termA = try await Self.term(a, "a")
            let id = SessionID.random()
            let token = try Self.token(try await a.acquireSessionLease(id, term: termA, creating: true))
            try await a.commit(Self.checkpoint(id, 1, "a"), fencedBy: token)
            try await a.releaseSessionLease(id, token: token)
            #expect(try await a.renewSessionLeaseTerm(termA, for: .seconds(60)))
            let taken = try await b.acquireSessionLease(id, term: try await Self.term(b, "b"), creating: false)
            #expect(try Self.token(taken).rawValue > token.rawValue)
        }
    }

    @Test("a store of the earlier schema (a lease row per session with its own expiry) is migrated: its leases become free, their tokens kept")
    func earlierSchemaMigrated() async throws {
        try await StoreBackend.postgres.withEmptyStore("session-lease-migration") { section in
            let url = try #require(section["url"])
            let id = SessionID.random()
            try await StoreSection.execute(section, [
                """
                CREATE TABLE coordinator_session_lease (
                    scope TEXT PRIMARY KEY, holder TEXT NOT NULL, gateway_url TEXT NOT NULL, fencing_token BIGINT NOT NULL,
                    lease_expires_at TIMESTAMPTZ NOT NULL)
                """,
                "INSERT INTO coordinator_session_lease VALUES ('\(id.text)', 'old', 'http://old', 7, now() + interval '1 hour')",
            ])
            let migrated = try await PostgresCoordinatorStore.open(url: url, fencesSessionsByLease: true)
            do {
                // The earlier owner's token still fences its session's commits.
                try await migrated.commit(Self.checkpoint(id, 1, "old"), fencedBy: FencingToken(rawValue: 7))
                let taken = try Self.token(try await migrated.acquireSessionLease(id, term: try await Self.term(migrated, "new"), creating: false))
                #expect(taken == FencingToken(rawValue: 8))
                #expect(try await migrated.latestCheckpoint(of: .session(id))?.snapshot == Data("old".utf8))
            } catch {
                await migrated.close()
                throw error
            }
            await migrated.close()
        }
    }
}
