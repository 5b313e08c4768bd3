import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The shared coordinator store: two tables in a PostgreSQL database, for coordinators on several
/// machines.
///
/// The same rows as the SQLite store: the writer (its fencing token and name) and the latest
/// checkpoint of each tree, by scope (a database of an earlier schema is migrated when a
/// coordinator opens it, its last step once every live coordinator of the store can write it;
/// one a later release migrated is refused: `StoreSchema`, `PostgresSchemaUpgrade`). A commit is one statement that reads the writer row `FOR SHARE` and writes the
/// checkpoint only if the token it carries is the writer's, so a new writer's token increment
/// waits for a commit in progress and every later commit with the old token is refused.
/// PostgreSQL makes a transaction durable (WAL flushed) before it reports the commit. The writer
/// row doubles as a lease with an expiry (`LeasedCoordinatorStore`), for coordinators that share
/// the database and lead one at a time. Commits that arrive together, of the shared root and of
/// any number of sessions, share one statement and so one transaction (`GroupCommit`), each
/// checkpoint fenced by its own token.
package final class PostgresCoordinatorStore: LeasedCoordinatorStore {
    /// The database, as errors name it (the URL without its password).
    package let name: String
    /// The longest any one round trip to the database may take while serving (a commit, taking
    /// the lease): then the connection is closed and the operation fails, so a database that
    /// stops answering fails the coordinator's commits (`503 not-durable`) instead of holding its
    /// clients forever.
    package let operationTimeout: Duration
    /// Whether sessions are spread over coordinators (`SessionLeaseStore`): then a session's
    /// commits and removal are fenced by its own lease's token, not by the writer row's.
    package let fencesSessionsByLease: Bool
    let connection: PostgresConnection
    /// The connection the lease's round trips take (`LeasedCoordinatorStore`): with
    /// `leaseConnection: true` at `open`, one of its own on an event loop thread of its own,
    /// so a renewal never waits behind a commit or behind the process's busy threads; else
    /// `connection`.
    let leaseConnection: PostgresConnection
    /// The lease connection's event loop group (one thread), when it has its own.
    private let leaseLoopGroup: MultiThreadedEventLoopGroup?
    /// Set by the first `close()`: the lease's event loop is shut down once, and nothing is
    /// asked of it afterwards (it would never answer).
    private let closed = Atomic<Bool>(false)
    /// Concurrent commits (of the shared root and of sessions) share one transaction.
    private let group: GroupCommit
    let logger: Logger
    /// The layouts this coordinator reads and writes.
    package let schema: StoreSchema
    /// The schema version it writes now: the store's as found at open, raised when a commit finds
    /// the store migrated to a later version this release writes too.
    private let writing = Atomic<Int>(0)

    private init(
        name: String, operationTimeout: Duration, fencesSessionsByLease: Bool, maxCommitBatch: Int, connection: PostgresConnection,
        lease: (PostgresConnection, MultiThreadedEventLoopGroup)?, schema: StoreSchema, logger: Logger
    ) {
        self.schema = schema
        self.name = name
        self.operationTimeout = operationTimeout
        self.fencesSessionsByLease = fencesSessionsByLease
        self.connection = connection
        self.leaseConnection = lease?.0 ?? connection
        self.leaseLoopGroup = lease?.1
        self.group = GroupCommit(storeName: name, maximumBatch: maxCommitBatch)
        self.logger = logger
    }

    /// Connects to the database `url` names and prepares its tables.
    ///
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or for a unix socket
    /// `postgres://USER@/DATABASE?host=SOCKET_DIRECTORY&port=PORT` (the server's socket is
    /// `SOCKET_DIRECTORY/.s.PGSQL.PORT`); `connect_timeout=SECONDS` (libpq's name) replaces
    /// `connectTimeout`, `operation_timeout=SECONDS` replaces `operationTimeout`; `sslmode` and
    /// `sslrootcert` secure the connection (`PostgresTransportSecurity`). A malformed URL, a
    /// refused TLS handshake, a server that does not answer within the timeout (the
    /// connection, the login and preparing the tables each bounded by it) or a refused login is
    /// `CoordinatorStoreError.cannotOpen`, in words: never a hang. `maxCommitBatch`: how many
    /// trees' checkpoints one transaction takes at most (`GroupCommit`). `fencesSessionsByLease`:
    /// sessions are spread over coordinators, each fenced by its own lease (`SessionLeaseStore`).
    ///
    /// With `leaseConnection`, for a coordinator that shares the store with standbys, the lease
    /// gets a second connection on an event loop thread of its own (`leaseConnection`).
    ///
    /// `schema`: the layouts this coordinator reads and writes (this release's unless a test
    /// plays another); `holder`: its name among the coordinators of the store, which
    /// another one's log names while it waits for this one to be upgraded (`PostgresSchemaUpgrade`).
    package static func open(
        url: String, connectTimeout: Duration = .seconds(5), operationTimeout: Duration = .seconds(30), leaseConnection: Bool = false,
        fencesSessionsByLease: Bool = false, maxCommitBatch: Int = StoreSettings.defaultMaxCommitBatch, schema: StoreSchema = .thisRelease,
        holder: String = "coordinator pid \(getpid())", logger: Logger = Logger(label: "workflow.cluster.store")
    ) async throws(CoordinatorStoreError) -> PostgresCoordinatorStore {
        let plan = try Self.plan(url: url, connectTimeout: connectTimeout, operationTimeout: operationTimeout)
        let (name, configuration, timeout, target) = (plan.name, plan.configuration, plan.connectTimeout, plan.target)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw .cannotOpen(store: name, reason: Self.words(error, target: target, timeout: timeout, security: plan.security))
        }
        var lease: (PostgresConnection, MultiThreadedEventLoopGroup)?
        if leaseConnection {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            do {
                lease = (try await PostgresConnection.connect(on: group.next(), configuration: configuration, id: 2, logger: logger), group)
            } catch {
                try? await connection.close()
                try? await group.shutdownGracefully()
                throw .cannotOpen(store: name, reason: Self.words(error, target: target, timeout: timeout, security: plan.security))
            }
        }
        let store = PostgresCoordinatorStore(
            name: name, operationTimeout: plan.operationTimeout, fencesSessionsByLease: fencesSessionsByLease, maxCommitBatch: maxCommitBatch, connection: connection,
            lease: lease, schema: schema, logger: logger)
        do {
            // Preparing is bounded too (a table another session holds locked would wait forever),
            // by the operation timeout: coordinators opening at once wait for each other here.
            let milliseconds = max(1, Int64(plan.operationTimeout / .milliseconds(1)))
            try await Self.run(connection, PostgresQuery(unsafeSQL: "SET statement_timeout = \(milliseconds)"), logger: logger)
            // One transaction under an advisory lock: coordinators opening a fresh database at
            // once would otherwise race in CREATE TABLE IF NOT EXISTS (a duplicate-key error).
            try await Self.run(connection, "BEGIN", logger: logger)
            try await Self.run(connection, "SELECT pg_advisory_xact_lock(\(Self.schemaLock))", logger: logger)
            // The store's schema version first: a store a later release has migrated is left as
            // it is (`StoreSchema`).
            try await Self.run(connection,
                "CREATE TABLE IF NOT EXISTS coordinator_schema (id INT PRIMARY KEY CHECK (id = 1), version INT NOT NULL, since TIMESTAMPTZ NOT NULL DEFAULT now())",
                logger: logger)
            var found = 0
            for try await version in try await connection.query("SELECT version FROM coordinator_schema WHERE id = 1", logger: logger).decode(Int32.self) {
                found = Int(version)
            }
            if found > schema.version { throw CoordinatorStoreError.cannotOpen(store: name, reason: schema.newerStore(found: found)) }
            try await Self.run(connection,
                """
                CREATE TABLE IF NOT EXISTS coordinator_writer (
                    id INT PRIMARY KEY CHECK (id = 1), fencing_token BIGINT NOT NULL, holder TEXT NOT NULL,
                    since TIMESTAMPTZ NOT NULL DEFAULT now(), lease_expires_at TIMESTAMPTZ, lease_backend_pid INT)
                """, logger: logger)
            // Added with the leader's advisory lock (`PostgresCoordinatorLease`): only where it is
            // missing, so a standby opening the store never queues an exclusive table lock in
            // front of a running leader's renewals.
            try await Self.run(connection,
                """
                DO $migrate$ BEGIN
                    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                                   AND table_name = 'coordinator_writer' AND column_name = 'lease_backend_pid') THEN
                        ALTER TABLE coordinator_writer ADD COLUMN lease_backend_pid INT;
                    END IF;
                END $migrate$
                """, logger: logger)
            try await Self.run(connection,
                """
                CREATE TABLE IF NOT EXISTS coordinator_tree_checkpoint (
                    scope TEXT PRIMARY KEY, root TEXT, props BYTEA, number BIGINT NOT NULL, fencing_token BIGINT NOT NULL,
                    rendering_sequence BIGINT NOT NULL, accepted_events BIGINT NOT NULL, snapshot BYTEA NOT NULL,
                    committed_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """, logger: logger)
            // The earlier schema's one checkpoint row is the shared root's: moved, in this
            // transaction, so a crash leaves either schema whole.
            try await Self.run(connection,
                """
                DO $migrate$ BEGIN
                    IF to_regclass('coordinator_checkpoint') IS NOT NULL THEN
                        INSERT INTO coordinator_tree_checkpoint
                            (scope, number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at)
                        SELECT '\(unescaped: CheckpointScope.sharedKey)', number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at
                        FROM coordinator_checkpoint WHERE id = 1
                        ON CONFLICT (scope) DO NOTHING;
                        DROP TABLE coordinator_checkpoint;
                    END IF;
                END $migrate$
                """, logger: logger)
            // Added with spread sessions: one lease per session, beside its checkpoint, live
            // while the coordinator term holding it is (`PostgresSessionLeases`).
            try await Self.run(connection, "CREATE SEQUENCE IF NOT EXISTS coordinator_session_term_number", logger: logger)
            try await Self.run(connection,
                """
                CREATE TABLE IF NOT EXISTS coordinator_session_term (
                    term BIGINT PRIMARY KEY, holder TEXT NOT NULL, gateway_url TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)
                """, logger: logger)
            try await Self.run(connection, "CREATE INDEX IF NOT EXISTS coordinator_session_term_holder ON coordinator_session_term (holder)", logger: logger)
            try await Self.run(connection,
                """
                CREATE TABLE IF NOT EXISTS coordinator_session_lease (
                    scope TEXT PRIMARY KEY, term BIGINT NOT NULL, fencing_token BIGINT NOT NULL, released BOOLEAN NOT NULL)
                """, logger: logger)
            // The earlier schema renewed every session's own expiry: its leases become given up
            // (free at once), their tokens kept, so the fencing of their commits carries over.
            try await Self.run(connection,
                """
                DO $migrate$ BEGIN
                    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                               AND table_name = 'coordinator_session_lease' AND column_name = 'lease_expires_at') THEN
                        ALTER TABLE coordinator_session_lease
                            ADD COLUMN term BIGINT NOT NULL DEFAULT 0, ADD COLUMN released BOOLEAN NOT NULL DEFAULT true,
                            DROP COLUMN holder, DROP COLUMN gateway_url, DROP COLUMN lease_expires_at;
                        ALTER TABLE coordinator_session_lease ALTER COLUMN term DROP DEFAULT, ALTER COLUMN released DROP DEFAULT;
                    END IF;
                END $migrate$
                """, logger: logger)
            // Version 1's tables are there (above): this coordinator announces itself and the
            // steps after version 1 run as far as every live coordinator of the store can
            // write, in this transaction, and the version reached is recorded.
            let writing = try await PostgresSchemaUpgrade(
                connection: connection, schema: schema, holder: holder, storeName: name, logger: logger
            ).advance(from: found)
            store.writing.store(writing, ordering: .releasing)
            try await Self.run(connection, "COMMIT", logger: logger)
            try await Self.run(connection, "RESET statement_timeout", logger: logger)
        } catch let error as CoordinatorStoreError {
            await store.close()
            throw error
        } catch {
            await store.close()
            throw .cannotOpen(store: name, reason: Self.words(error, target: target, timeout: timeout, security: plan.security))
        }
        return store
    }

    /// The schema version this coordinator writes now (`writing`).
    package var writingVersion: Int { writing.load(ordering: .acquiring) }

    /// Moves the version written from `old` to `new` (a commit found the store migrated); `false`
    /// if another commit has moved it already.
    private func switchWriting(from old: Int, to new: Int) -> Bool {
        writing.compareExchange(expected: old, desired: new, ordering: .acquiringAndReleasing).exchanged
    }

    /// The store's schema version as recorded now.
    package func schemaVersion() async throws(CoordinatorStoreError) -> Int {
        Int(try await values("reading the store's schema version", Int32.self, "SELECT version FROM coordinator_schema WHERE id = 1").first ?? 0)
    }

    /// Runs `query` to its end: a statement's error (a timeout, a conflict) surfaces when its
    /// results are read, so reading them reports it as it happened rather than as the next
    /// statement's "current transaction is aborted".
    private static func run(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await connection.query(query, logger: logger) {}
    }

    /// The advisory lock key that serialises preparing the tables (any fixed number; this one
    /// spells "wfcs").
    private static let schemaLock: Int64 = 0x7766_6373

    package func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken {
        let tokens = try await values(
            "becoming the writer", Int64.self,
            """
            INSERT INTO coordinator_writer (id, fencing_token, holder) VALUES (1, 1, \(holder))
            ON CONFLICT (id) DO UPDATE SET fencing_token = coordinator_writer.fencing_token + 1, holder = EXCLUDED.holder, since = now(),
                lease_expires_at = NULL, lease_backend_pid = NULL
            RETURNING fencing_token
            """)
        guard let token = tokens.first else {
            throw .failed(store: name, operation: "becoming the writer", reason: "no fencing token returned")
        }
        return FencingToken(rawValue: token)
    }

    package func latestCheckpoint(of scope: CheckpointScope) async throws(CoordinatorStoreError) -> CoordinatorCheckpoint? {
        let name = name
        return try await bounded("reading the latest checkpoint of \(scope)") { [connection, logger] in
            let rows = try await connection.query(
                """
                SELECT root, props, number, rendering_sequence, accepted_events, snapshot FROM coordinator_tree_checkpoint
                WHERE scope = \(scope.key)
                """, logger: logger)
            for try await (root, props, number, sequence, accepted, snapshot) in rows.decode(
                (String?, ByteBuffer?, Int64, Int64, Int64, ByteBuffer).self)
            {
                var origin: SessionOrigin?
                if case .session = scope {
                    guard let root else { throw CoordinatorStoreError.corrupt(store: name, reason: "the checkpoint of \(scope) names no root") }
                    origin = SessionOrigin(root: root, props: props.map { Data($0.readableBytesView) })
                }
                return CoordinatorCheckpoint(
                    scope: scope, origin: origin, number: number, renderingSequence: UInt64(max(0, sequence)), acceptedEvents: accepted,
                    snapshot: Data(snapshot.readableBytesView))
            }
            return nil
        }
    }

    package func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        try await group.commit(FencedCheckpoint(checkpoint, fencedBy: token)) { batch in await self.commit(batch) }.get()
    }

    package func commit(_ checkpoints: [FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] {
        guard !checkpoints.isEmpty else { return [] }
        // One statement, so one transaction (`PostgresCheckpointCommit`). A session's key is its
        // id's 32 hex digits (`SessionID`). The layout written: the store's schema version as
        // this coordinator last found it; columns a schema step added are filled in from the
        // checkpoint.
        let first = checkpoints[0].checkpoint
        let operation =
            checkpoints.count == 1
            ? "committing checkpoint \(first.number) of \(first.scope)" : "committing \(checkpoints.count) checkpoints in one transaction"
        let writing = writingVersion
        let statement = PostgresCheckpointCommit(
            checkpoints, leased: fencesSessionsByLease, writing: writing, extra: schema.checkpointColumns(writing: writing))
        let committed: Set<String>
        do throws(CoordinatorStoreError) {
            committed = Set(
                try await bounded(operation) { [connection, logger] in
                    try await statement.run(on: connection, logger: logger)
                })
        } catch {
            return Array(repeating: .failure(error), count: checkpoints.count)
        }
        guard committed.count < checkpoints.count else { return Array(repeating: .success(()), count: checkpoints.count) }
        // Some were refused. The schema may have been migrated since this coordinator last
        // looked (by a coordinator that found every live one able to write the new version):
        // then the refused are written again in the new layout, if this release writes it, and
        // refused in words if not.
        let layout: Int
        do throws(CoordinatorStoreError) {
            layout = try await schemaVersion()
        } catch {
            return checkpoints.map { committed.contains($0.checkpoint.scope.key) ? .success(()) : .failure(error) }
        }
        if layout != writing {
            let refused = checkpoints.filter { !committed.contains($0.checkpoint.scope.key) }
            var again: [Result<Void, CoordinatorStoreError>]
            if (schema.oldestWritable...schema.version).contains(layout) {
                if switchWriting(from: writing, to: layout) {
                    logger.notice("the store's schema was migrated to version \(layout) by another coordinator: writing it from now on", metadata: ["store": "\(name)"])
                }
                again = await commit(refused)
            } else {
                again = Array(repeating: .failure(.schemaMigrated(store: name, found: layout, writes: schema.version)), count: refused.count)
            }
            return checkpoints.map { committed.contains($0.checkpoint.scope.key) ? .success(()) : again.removeFirst() }
        }
        // Fenced: each names the token that fences it now.
        var outcomes: [Result<Void, CoordinatorStoreError>] = []
        for fenced in checkpoints {
            guard !committed.contains(fenced.checkpoint.scope.key) else {
                outcomes.append(.success(()))
                continue
            }
            do throws(CoordinatorStoreError) {
                let current: FencingToken
                if fencesSessionsByLease, case .session(let id) = fenced.checkpoint.scope {
                    current = try await sessionToken(id)
                } else {
                    current = try await currentToken()
                }
                outcomes.append(.failure(.fenced(store: name, offered: fenced.token, current: current)))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }

    package func storedSessions() async throws(CoordinatorStoreError) -> [StoredSession] {
        let name = name
        return try await bounded("listing the stored sessions") { [connection, logger] in
            let rows = try await connection.query(
                """
                SELECT scope, root, rendering_sequence FROM coordinator_tree_checkpoint WHERE scope <> \(CheckpointScope.sharedKey)
                ORDER BY scope
                """, logger: logger)
            var sessions: [StoredSession] = []
            for try await (key, root, sequence) in rows.decode((String, String?, Int64).self) {
                guard case .session(let id) = CheckpointScope(key: key), let root else {
                    throw CoordinatorStoreError.corrupt(store: name, reason: "a session's checkpoint row with a malformed scope or no root")
                }
                sessions.append(StoredSession(id: id, root: root, renderingSequence: UInt64(max(0, sequence))))
            }
            return sessions
        }
    }

    package func remove(_ scope: CheckpointScope, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        if fencesSessionsByLease, case .session(let id) = scope {
            try await removeSession(id, fencedBy: token)
            return
        }
        let removed = try await values(
            "removing the checkpoint of \(scope)", Int64.self,
            """
            WITH writer AS (SELECT fencing_token FROM coordinator_writer WHERE id = 1 FOR SHARE)
            DELETE FROM coordinator_tree_checkpoint
            WHERE scope = \(scope.key) AND EXISTS (SELECT 1 FROM writer WHERE writer.fencing_token = \(token.rawValue))
            RETURNING number
            """)
        guard removed.isEmpty else { return }
        // Nothing removed: either there was nothing, or a newer writer holds the store.
        let current = try await currentToken()
        if current != token { throw .fenced(store: name, offered: token, current: current) }
    }

    /// The writer row's token (0: none).
    func currentToken() async throws(CoordinatorStoreError) -> FencingToken {
        let current = try await values(
            "reading the writer's fencing token", Int64.self, "SELECT fencing_token FROM coordinator_writer WHERE id = 1")
        return FencingToken(rawValue: current.first ?? 0)
    }

    /// The refusal of a write carrying `token`, naming the writer's current one.
    func fenced(_ token: FencingToken) async throws(CoordinatorStoreError) -> CoordinatorStoreError {
        .fenced(store: name, offered: token, current: try await currentToken())
    }

    package func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? await connection.close()
        guard let leaseLoopGroup else { return }
        try? await leaseConnection.close()
        try? await leaseLoopGroup.shutdownGracefully()
    }

    /// The first column of every row `query` returns.
    func values<Value: PostgresDecodable & Sendable>(
        _ operation: String, _: Value.Type, _ query: PostgresQuery
    ) async throws(CoordinatorStoreError) -> [Value] {
        try await bounded(operation) { [connection, logger] in
            var values: [Value] = []
            for try await value in try await connection.query(query, logger: logger).decode(Value.self) { values.append(value) }
            return values
        }
    }

    /// Runs `body` (round trips on a connection), closing that connection if the database has
    /// not answered within `operationTimeout`: that fails the round trip in progress, so the
    /// caller gets an error in words instead of waiting for a database that may never answer.
    /// The store is unusable afterwards (every later call fails), as after any lost connection.
    /// `connection` is the one `body` uses (the store's, or the lease's).
    func bounded<T: Sendable>(
        _ operation: String, on connection: PostgresConnection? = nil, _ body: @escaping @Sendable () async throws -> T
    ) async throws(CoordinatorStoreError) -> T {
        let (timeout, connection) = (operationTimeout, connection ?? self.connection)
        // A query sent on a closed connection is never answered: once it is closed (lost, or
        // closed by an earlier timeout), every call fails at once, in words.
        guard !connection.isClosed else {
            throw .failed(store: name, operation: operation, reason: "the connection to the database is closed (it was lost, or closed after a timeout)")
        }
        let result = await withTaskGroup(of: BoundedOutcome<T>.self) { group -> Result<T, any Error>? in
            group.addTask {
                do { return .done(.success(try await body())) } catch { return .done(.failure(error)) }
            }
            group.addTask {
                // Cancelled once `body` is done: then this outcome is never read.
                try? await Task.sleep(for: timeout)
                return .expired
            }
            var expired = false
            while let outcome = await group.next() {
                guard case .done(let result) = outcome else {
                    // Noted before the connection closes, so the failure that follows is read
                    // as the timeout's.
                    expired = true
                    try? await connection.close()
                    continue
                }
                group.cancelAll()
                if expired, case .failure = result { return nil }
                return result
            }
            return nil
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as CoordinatorStoreError): throw error
        case .failure(let error): throw .failed(store: name, operation: operation, reason: Self.words(error))
        case nil:
            throw .failed(store: name, operation: operation, reason: "the database did not answer within \(timeout); the connection is closed")
        }
    }
}

/// What finished first in `PostgresCoordinatorStore.bounded`: the round trip, or the timeout.
enum BoundedOutcome<T: Sendable>: Sendable {
    case done(Result<T, any Error>)
    case expired
}
