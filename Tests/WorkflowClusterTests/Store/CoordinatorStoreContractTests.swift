import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowCluster

/// What every `CoordinatorStore` promises, checked against each real store: an SQLite file and a
/// private PostgreSQL server (skipped, saying why, where none can be started).
@Suite("Coordinator store contract")
struct CoordinatorStoreContractTests {
    static func checkpoint(_ number: Int64, _ text: String) -> CoordinatorCheckpoint {
        CoordinatorCheckpoint(number: number, renderingSequence: UInt64(number * 10), acceptedEvents: number * 3, snapshot: Data(text.utf8))
    }

    @Test("an empty store has no checkpoint; a committed one is read back after the store is closed and opened again", arguments: StoreBackend.allCases)
    func checkpointSurvivesReopening(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("reopen") { section in
            let store = try await StoreSection.open(section)
            #expect(try await store.latestCheckpoint() == nil)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(Self.checkpoint(1, "first"), fencedBy: token)
            try await store.commit(Self.checkpoint(2, "second"), fencedBy: token)
            #expect(try await store.latestCheckpoint() == Self.checkpoint(2, "second"))
            await store.close()

            let reopened = try await StoreSection.open(section)
            #expect(try await reopened.latestCheckpoint() == Self.checkpoint(2, "second"))
            await reopened.close()
        }
    }

    @Test("a checkpoint's bytes and numbers come back exactly: every byte value, a megabyte, the largest sequence", arguments: StoreBackend.allCases)
    func checkpointRoundTrips(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("bytes") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let bytes = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
            let big = CoordinatorCheckpoint(number: 7, renderingSequence: UInt64(Int64.max), acceptedEvents: 1 << 40, snapshot: bytes)
            try await store.commit(big, fencedBy: token)
            #expect(try await store.latestCheckpoint() == big)
            let empty = CoordinatorCheckpoint(number: 8, renderingSequence: 0, acceptedEvents: 0, snapshot: Data())
            try await store.commit(empty, fencedBy: token)
            #expect(try await store.latestCheckpoint() == empty)
            await store.close()
        }
    }

    @Test("each new writer gets a higher fencing token; the old writer's commits are refused and change nothing", arguments: StoreBackend.allCases)
    func staleWriterIsFenced(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("fence") { section in
            let old = try await StoreSection.open(section)
            let oldToken = try await old.acquireWriter(holder: "old")
            try await old.commit(Self.checkpoint(11, "old"), fencedBy: oldToken)

            let new = try await StoreSection.open(section)
            let newToken = try await new.acquireWriter(holder: "new")
            #expect(newToken > oldToken)
            await #expect {
                try await old.commit(Self.checkpoint(12, "late write of the deposed writer"), fencedBy: oldToken)
            } throws: { error in
                guard case .fenced(_, let offered, let current) = error as? CoordinatorStoreError else { return false }
                return offered == oldToken && current == newToken
            }
            #expect(try await new.latestCheckpoint() == Self.checkpoint(11, "old"))
            try await new.commit(Self.checkpoint(12, "new"), fencedBy: newToken)
            #expect(try await old.latestCheckpoint() == Self.checkpoint(12, "new"))
            let third = try await StoreSection.open(section)
            #expect(try await third.acquireWriter(holder: "third") > newToken)
            await old.close()
            await new.close()
            await third.close()
        }
    }

    @Test(
        "commits racing a new writer: each either lands before the new writer's token or is refused, and none lands after a refusal",
        arguments: StoreBackend.allCases)
    func commitsRacingANewWriter(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("race") { section in
            let old = try await StoreSection.open(section)
            let oldToken = try await old.acquireWriter(holder: "old")
            let new = try await StoreSection.open(section)
            let lastCommitted = Mutex<Int64>(0)
            let (someCommitted, signal) = AsyncStream.makeStream(of: Void.self)
            let writer = Task {
                defer { signal.finish() }
                // Commits until the first refusal; then one more, which must be refused too.
                var number: Int64 = 1
                while true {
                    do {
                        try await old.commit(Self.checkpoint(number, "old \(number)"), fencedBy: oldToken)
                        lastCommitted.withLock { $0 = number }
                        if number == 3 { signal.finish() }
                        number += 1
                    } catch CoordinatorStoreError.fenced {
                        break
                    }
                }
                await #expect {
                    try await old.commit(Self.checkpoint(number + 1, "after the refusal"), fencedBy: oldToken)
                } throws: { error in
                    if case .fenced = error as? CoordinatorStoreError { true } else { false }
                }
            }
            // The new writer arrives once the old one has committed a few.
            for await _ in someCommitted {}
            let newToken = try await new.acquireWriter(holder: "new")
            try await writer.value
            let committed = lastCommitted.withLock { $0 }
            // The store holds exactly the old writer's last successful commit: nothing refused
            // was written, nothing that succeeded was lost.
            #expect(try await new.latestCheckpoint() == Self.checkpoint(committed, "old \(committed)"))
            try await new.commit(Self.checkpoint(committed + 1, "new"), fencedBy: newToken)
            #expect(try await new.latestCheckpoint() == Self.checkpoint(committed + 1, "new"))
            await old.close()
            await new.close()
        }
    }

    /// A session's checkpoint `number` of `text`, created of the root `root`.
    static func sessionCheckpoint(_ id: SessionID, _ number: Int64, _ text: String, root: String = "board", props: Data? = nil)
        -> CoordinatorCheckpoint
    {
        CoordinatorCheckpoint(
            scope: .session(id), origin: SessionOrigin(root: root, props: props), number: number, renderingSequence: UInt64(number * 10),
            acceptedEvents: number, snapshot: Data(text.utf8))
    }

    @Test(
        "each scope keeps its own latest checkpoint; sessions are listed without their trees, come back with the origin of their first commit, and a removed one is gone",
        arguments: StoreBackend.allCases)
    func scopesAreKeptApart(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("scopes") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let (a, b) = (SessionID.random(), SessionID.random())
            let props = Data(#"{"step": 2, "bytes": "\u0000\u00ff"}"#.utf8)
            try await store.commit(Self.checkpoint(1, "shared"), fencedBy: token)
            try await store.commit(Self.sessionCheckpoint(a, 1, "a1", props: props), fencedBy: token)
            try await store.commit(Self.sessionCheckpoint(b, 1, "b1", root: "other"), fencedBy: token)
            // A later commit carrying another origin changes the tree, not the origin.
            try await store.commit(Self.sessionCheckpoint(a, 2, "a2", root: "changed"), fencedBy: token)
            #expect(try await store.latestCheckpoint() == Self.checkpoint(1, "shared"))
            #expect(try await store.latestCheckpoint(of: .session(a)) == Self.sessionCheckpoint(a, 2, "a2", props: props))
            #expect(try await store.latestCheckpoint(of: .session(b)) == Self.sessionCheckpoint(b, 1, "b1", root: "other"))
            #expect(try await store.latestCheckpoint(of: .session(SessionID.random())) == nil)
            let listed = [StoredSession(id: a, root: "board", renderingSequence: 20), StoredSession(id: b, root: "other", renderingSequence: 10)]
            #expect(try await store.storedSessions() == listed.sorted { $0.id.text < $1.id.text })
            await store.close()

            let reopened = try await StoreSection.open(section)
            let newToken = try await reopened.acquireWriter(holder: "reopened")
            #expect(try await reopened.storedSessions() == listed.sorted { $0.id.text < $1.id.text })
            try await reopened.remove(.session(a), fencedBy: newToken)
            #expect(try await reopened.latestCheckpoint(of: .session(a)) == nil)
            #expect(try await reopened.storedSessions() == [listed[1]])
            #expect(try await reopened.latestCheckpoint() == Self.checkpoint(1, "shared"))
            // Removing what is not there does nothing.
            try await reopened.remove(.session(a), fencedBy: newToken)
            await reopened.close()
        }
    }

    @Test("a deposed writer can neither commit a session's checkpoint nor remove one", arguments: StoreBackend.allCases)
    func staleWriterCannotTouchSessions(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("fence-sessions") { section in
            let old = try await StoreSection.open(section)
            let oldToken = try await old.acquireWriter(holder: "old")
            let id = SessionID.random()
            try await old.commit(Self.sessionCheckpoint(id, 1, "kept"), fencedBy: oldToken)
            let new = try await StoreSection.open(section)
            let newToken = try await new.acquireWriter(holder: "new")
            let refused: (any Error) -> Bool = { error in
                guard case .fenced(_, let offered, let current) = error as? CoordinatorStoreError else { return false }
                return offered == oldToken && current == newToken
            }
            await #expect { try await old.commit(Self.sessionCheckpoint(id, 2, "late"), fencedBy: oldToken) } throws: { refused($0) }
            await #expect { try await old.remove(.session(id), fencedBy: oldToken) } throws: { refused($0) }
            await #expect { try await old.remove(.session(SessionID.random()), fencedBy: oldToken) } throws: { refused($0) }
            #expect(try await new.latestCheckpoint(of: .session(id)) == Self.sessionCheckpoint(id, 1, "kept"))
            await old.close()
            await new.close()
        }
    }

    @Test(
        "a store of the earlier schema (one checkpoint row) opens with its checkpoint as the shared root's, and takes sessions",
        arguments: StoreBackend.allCases)
    func earlierSchemaIsMigrated(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("migrate") { section in
            // The tables as the version before sessions were durable created and left them.
            let earlier =
                switch backend {
                case .sqlite: [
                    "CREATE TABLE coordinator_writer (id INTEGER PRIMARY KEY CHECK (id = 1), fencing_token INTEGER NOT NULL, holder TEXT NOT NULL, since TEXT NOT NULL)",
                    """
                    CREATE TABLE coordinator_checkpoint (id INTEGER PRIMARY KEY CHECK (id = 1), number INTEGER NOT NULL,
                        fencing_token INTEGER NOT NULL, rendering_sequence INTEGER NOT NULL, accepted_events INTEGER NOT NULL,
                        snapshot BLOB NOT NULL, committed_at TEXT NOT NULL)
                    """,
                    "INSERT INTO coordinator_writer VALUES (1, 7, 'earlier', datetime('now'))",
                    "INSERT INTO coordinator_checkpoint VALUES (1, 41, 7, 410, 123, X'00FF41', datetime('now'))",
                ]
                case .postgres: [
                    """
                    CREATE TABLE coordinator_writer (id INT PRIMARY KEY CHECK (id = 1), fencing_token BIGINT NOT NULL, holder TEXT NOT NULL,
                        since TIMESTAMPTZ NOT NULL DEFAULT now(), lease_expires_at TIMESTAMPTZ)
                    """,
                    """
                    CREATE TABLE coordinator_checkpoint (id INT PRIMARY KEY CHECK (id = 1), number BIGINT NOT NULL,
                        fencing_token BIGINT NOT NULL, rendering_sequence BIGINT NOT NULL, accepted_events BIGINT NOT NULL,
                        snapshot BYTEA NOT NULL, committed_at TIMESTAMPTZ NOT NULL DEFAULT now())
                    """,
                    "INSERT INTO coordinator_writer (id, fencing_token, holder) VALUES (1, 7, 'earlier')",
                    #"INSERT INTO coordinator_checkpoint (id, number, fencing_token, rendering_sequence, accepted_events, snapshot) VALUES (1, 41, 7, 410, 123, '\x00ff41'::bytea)"#,
                ]
                }
            try await StoreSection.execute(section, earlier)
            let expected = CoordinatorCheckpoint(number: 41, renderingSequence: 410, acceptedEvents: 123, snapshot: Data([0x00, 0xFF, 0x41]))
            let store = try await StoreSection.open(section)
            #expect(try await store.latestCheckpoint() == expected)
            #expect(try await store.storedSessions() == [])
            let token = try await store.acquireWriter(holder: "upgraded")
            #expect(token.rawValue == 8, "the fencing token keeps rising across the upgrade")
            let id = SessionID.random()
            try await store.commit(Self.sessionCheckpoint(id, 1, "session"), fencedBy: token)
            await store.close()
            // Opened again: nothing to migrate, everything kept.
            let reopened = try await StoreSection.open(section)
            #expect(try await reopened.latestCheckpoint() == expected)
            #expect(try await reopened.storedSessions().map(\.id) == [id])
            await reopened.close()
            await #expect(throws: (any Error).self, "the earlier table is gone") {
                try await StoreSection.execute(section, ["SELECT number FROM coordinator_checkpoint"])
            }
        }
    }
}
