import Foundation
import Logging

/// The embedded coordinator store: one SQLite file in WAL mode, `synchronous=FULL` by default,
/// so a committed checkpoint is on disk (the WAL fsynced) before `commit` returns
/// (`StoreSettings.Sync.normal`: written to the WAL, fsynced at SQLite's next checkpoint of it). Commits that
/// arrive together, of the shared root and of any number of sessions, share one transaction
/// (`GroupCommit`), so one fsync makes all of them durable.
///
/// Two tables: the writer (one row: its fencing token and name) and the latest checkpoint of each
/// tree, one row per `CheckpointScope` (the shared root's, each session's). A commit is one
/// transaction whose statement, one run per tree, writes a checkpoint only if the token it
/// carries is the writer row's: checking the token and writing are one atomic step. A file of the earlier schema (one
/// checkpoint row, the shared root's) is migrated when it is opened, and so is one of an earlier
/// schema version, to the newest this build writes (`StoreSchema`: the file's `user_version`): the
/// file has one writer, the last process to open it (below), so no coordinator of the earlier
/// release can be left writing it: one still running is fenced, and each commit checks the
/// file's version too. One a later release migrated is refused. Opening the file
/// as writer raises the token: the embedded store has no lease expiry (one machine, one file);
/// whoever opens the file last is its writer, and an earlier process still running is fenced.
///
/// SQLite is the system's library (`libsqlite3`), through the store's own thin binding
/// (`SQLiteHandle`, which keeps its statements prepared); each connection's calls run on a
/// thread of its own (`SQLiteStoreConnection`), off the caller's.
package final class SQLiteCoordinatorStore: CoordinatorStore {
    /// The database file.
    package let path: String
    private let connection: SQLiteStoreConnection
    /// Concurrent commits (of the shared root and of sessions) share one transaction.
    private let group: GroupCommit
    /// Checkpoints the write-ahead log off the commit path (`SQLiteLogCheckpointer`).
    private let logCheckpointer: SQLiteLogCheckpointer
    /// The tables' layout this store writes: its schema's newest version.
    package let schema: StoreSchema
    /// The page cache of the writing connection, in KiB: the scope index of about 100,000
    /// sessions' checkpoints (SQLite's default is 2,048).
    package static let commitCacheKibibytes = 8_192
    /// The page cache the listing of every stored session reads through, in KiB: SQLite's default.
    private static let listingCacheKibibytes = 2_048
    /// The statement that writes one tree's checkpoint (`commit(_:)`), kept prepared by the
    /// connection.
    private let commitStatement: String

    private init(path: String, connection: SQLiteStoreConnection, maxCommitBatch: Int, logCheckpointer: SQLiteLogCheckpointer, schema: StoreSchema) {
        self.path = path
        self.connection = connection
        self.group = GroupCommit(storeName: path, maximumBatch: maxCommitBatch)
        self.logCheckpointer = logCheckpointer
        self.schema = schema
        self.commitStatement = Self.commitStatement(schema)
    }

    /// The statement writing one checkpoint: its row is written only if its token (`?5`) is the
    /// writer row's and the file is still of `schema`'s version; columns of later schema
    /// versions follow the eight every version has (`?9`, …).
    private static func commitStatement(_ schema: StoreSchema) -> String {
        let extra = schema.checkpointColumns(writing: schema.version)
        let extraNames = extra.map { ", " + $0.name }.joined()
        let extraValues = extra.indices.map { ", ?\(9 + $0)" }.joined()
        let extraUpdates = extra.map { ", \($0.name) = excluded.\($0.name)" }.joined()
        return """
            INSERT INTO coordinator_tree_checkpoint
                (scope, root, props, number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at\(extraNames))
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, datetime('now')\(extraValues)
            WHERE ?5 = (SELECT fencing_token FROM coordinator_writer WHERE id = 1)
                AND (SELECT user_version FROM pragma_user_version) = \(schema.version)
            ON CONFLICT (scope) DO UPDATE SET number = excluded.number, fencing_token = excluded.fencing_token,
                rendering_sequence = excluded.rendering_sequence, accepted_events = excluded.accepted_events,
                snapshot = excluded.snapshot, committed_at = excluded.committed_at\(extraUpdates)
            """
    }

    /// Opens (creating if missing) the database at `path` and prepares its tables; `sync` says
    /// when a commit reaches the disk, `maxCommitBatch` how many trees' checkpoints one
    /// transaction takes at most. A path in a directory that does not exist, a file that is
    /// not an SQLite database or one this user cannot write is `CoordinatorStoreError.cannotOpen`
    /// with the reason in words.
    /// `schema`: the layout it reads and writes (this release's unless a test plays another).
    package static func open(
        path: String, sync: StoreSettings.Sync = .full, maxCommitBatch: Int = StoreSettings.defaultMaxCommitBatch,
        schema: StoreSchema = .thisRelease, logger: Logger = Logger(label: "workflow.cluster.store")
    ) async throws(CoordinatorStoreError)
        -> SQLiteCoordinatorStore
    {
        try await open(
            path: path, sync: sync, maxCommitBatch: maxCommitBatch, logRestartFrames: SQLiteLogCheckpointer.defaultRestartFrames, schema: schema,
            logger: logger)
    }

    /// `open(path:sync:maxCommitBatch:logger:)` with the write-ahead log restarted once it holds
    /// `logRestartFrames` frames (`SQLiteLogCheckpointer`; small in tests).
    package static func open(
        path: String, sync: StoreSettings.Sync = .full, maxCommitBatch: Int = StoreSettings.defaultMaxCommitBatch,
        logRestartFrames: Int, schema: StoreSchema = .thisRelease, logger: Logger = Logger(label: "workflow.cluster.store")
    ) async throws(CoordinatorStoreError)
        -> SQLiteCoordinatorStore
    {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .cannotOpen(store: path, reason: "its directory \(directory) does not exist")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .cannotOpen(store: path, reason: "it is a directory, not a database file")
        }
        let connection: SQLiteStoreConnection
        do {
            connection = try await SQLiteStoreConnection.open(path: path, logger: logger)
        } catch {
            throw .cannotOpen(store: path, reason: Self.words(error))
        }
        let logCheckpointer: SQLiteLogCheckpointer
        do {
            // Coordinators opening the file at once wait for each other (its migration above all).
            _ = try await connection.query("PRAGMA busy_timeout = \(SQLiteLogCheckpointer.busyTimeoutMilliseconds)")
            let mode = try await connection.query("PRAGMA journal_mode = WAL").first?.column("journal_mode")?.string
            guard mode?.lowercased() == "wal" else {
                await connection.close()
                throw CoordinatorStoreError.cannotOpen(store: path, reason: "SQLite refused write-ahead logging (journal mode \(mode ?? "unknown"))")
            }
            _ = try await connection.query(sync == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            // Each session's commit reads and dirties a leaf of the checkpoints' scope index, at a
            // random place (session ids): past about 45,000 sessions those leaves outgrow SQLite's
            // default cache (2 MiB) and each commit reads its leaf back from the file.
            _ = try await connection.query("PRAGMA cache_size = -\(commitCacheKibibytes)")
            // The file's schema version first: one a later release has migrated is left as it is
            // (`StoreSchema`).
            let found = try await connection.query("PRAGMA user_version").first?.column("user_version")?.integer ?? 0
            if found > schema.version {
                await connection.close()
                throw CoordinatorStoreError.cannotOpen(store: path, reason: schema.newerStore(found: found))
            }
            if let refusal = try await prepareCheckpoints(connection, schema: schema, logger: logger) {
                await connection.close()
                throw CoordinatorStoreError.cannotOpen(store: path, reason: refusal)
            }
            // The log is checkpointed by a connection of its own, never inside a commit; a commit
            // waits for that connection's occasional RESTART, and the log's file is shrunk back
            // after one (SQLiteLogCheckpointer).
            _ = try await connection.query("PRAGMA wal_autocheckpoint = 0")
            _ = try await connection.query("PRAGMA journal_size_limit = \(logRestartFrames * 4_096)")
            logCheckpointer = try await SQLiteLogCheckpointer.start(
                path: path, sync: sync, interval: .milliseconds(200), restartFrames: logRestartFrames, logger: logger)
        } catch let error as CoordinatorStoreError {
            throw error
        } catch {
            await connection.close()
            throw .cannotOpen(store: path, reason: Self.words(error))
        }
        return SQLiteCoordinatorStore(
            path: path, connection: connection, maxCommitBatch: maxCommitBatch, logCheckpointer: logCheckpointer, schema: schema)
    }

    /// Creates the writer and checkpoint tables, the latter keyed by scope, moves the shared root's checkpoint of a
    /// file of the earlier schema (`coordinator_checkpoint`, one row) into it, and runs the steps
    /// of `schema` the file has not had, in one transaction: a crash leaves either schema whole,
    /// and of processes opening the file at once, one runs each step (the version is read again
    /// inside the transaction). Returns why the file is refused (a later release migrated it
    /// meanwhile), else `nil`.
    private static func prepareCheckpoints(_ connection: SQLiteStoreConnection, schema: StoreSchema, logger: Logger) async throws(SQLiteFailure) -> String? {
        try await connection.transaction { database throws(SQLiteFailure) -> String? in
            let found = try database.rows("PRAGMA user_version").first?.column("user_version")?.integer ?? 0
            // Nothing written: the transaction ends with nothing to commit.
            if found > schema.version { return schema.newerStore(found: found) }
            // In the transaction: a statement that writes outside one, after another process's
            // migration committed, would be refused at once (SQLite's busy snapshot), not waited.
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS coordinator_writer (
                    id INTEGER PRIMARY KEY CHECK (id = 1), fencing_token INTEGER NOT NULL, holder TEXT NOT NULL, since TEXT NOT NULL)
                """)
            try database.execute(
                """
                CREATE TABLE IF NOT EXISTS coordinator_tree_checkpoint (
                    scope TEXT PRIMARY KEY, root TEXT, props BLOB, number INTEGER NOT NULL, fencing_token INTEGER NOT NULL,
                    rendering_sequence INTEGER NOT NULL, accepted_events INTEGER NOT NULL, snapshot BLOB NOT NULL,
                    committed_at TEXT NOT NULL)
                """)
            let earlier = try database.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'coordinator_checkpoint'")
            if !earlier.isEmpty {
                try database.execute(
                    """
                    INSERT INTO coordinator_tree_checkpoint
                        (scope, number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at)
                    SELECT ?1, number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at
                    FROM coordinator_checkpoint WHERE id = 1
                    ON CONFLICT (scope) DO NOTHING
                    """, [.text(CheckpointScope.sharedKey)])
                try database.execute("DROP TABLE coordinator_checkpoint")
            }
            var version = max(found, 1)
            while version < schema.version {
                version += 1
                guard let step = schema.step(to: version) else { continue }
                for statement in step.sqlite { try database.execute(statement) }
                logger.notice("store schema migrated to version \(version): \(step.summary)", metadata: ["store": "sqlite"])
            }
            // Migrated (in this transaction): the file is of this build's version now.
            try database.execute("PRAGMA user_version = \(schema.version)")
            return nil
        }
    }

    package func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken {
        let rows = try await query(
            "becoming the writer",
            """
            INSERT INTO coordinator_writer (id, fencing_token, holder, since) VALUES (1, 1, ?1, datetime('now'))
            ON CONFLICT (id) DO UPDATE SET fencing_token = fencing_token + 1, holder = excluded.holder, since = excluded.since
            RETURNING fencing_token
            """, [.text(holder)])
        guard let token = rows.first?.column("fencing_token")?.integer else {
            throw .failed(store: path, operation: "becoming the writer", reason: "no fencing token returned")
        }
        return FencingToken(rawValue: Int64(token))
    }

    package func latestCheckpoint(of scope: CheckpointScope) async throws(CoordinatorStoreError) -> CoordinatorCheckpoint? {
        let rows = try await query(
            "reading the latest checkpoint of \(scope)",
            """
            SELECT root, props, number, rendering_sequence, accepted_events, snapshot FROM coordinator_tree_checkpoint WHERE scope = ?1
            """, [.text(scope.key)])
        guard let row = rows.first else { return nil }
        guard let number = row.column("number")?.integer, let sequence = row.column("rendering_sequence")?.integer,
            let accepted = row.column("accepted_events")?.integer, let snapshot = row.column("snapshot")?.blob
        else { throw .corrupt(store: path, reason: "a checkpoint row of \(scope) with a missing or mistyped column") }
        var origin: SessionOrigin?
        if case .session = scope {
            guard let root = row.column("root")?.string else {
                throw .corrupt(store: path, reason: "the checkpoint of \(scope) names no root")
            }
            origin = SessionOrigin(root: root, props: row.column("props")?.blob)
        }
        return CoordinatorCheckpoint(
            scope: scope, origin: origin, number: Int64(number), renderingSequence: UInt64(max(0, sequence)),
            acceptedEvents: Int64(accepted), snapshot: snapshot)
    }

    package func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        try await group.commit(FencedCheckpoint(checkpoint, fencedBy: token)) { batch in await self.commit(batch) }.get()
    }

    package func commit(_ checkpoints: [FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] {
        guard !checkpoints.isEmpty else { return [] }
        // One transaction, one kept statement run per checkpoint: each writes its row only if
        // the token it carries is the writer row's (a stale token filters out its own row only),
        // and only if the file's schema version is still this store's (a process of a later
        // release may have migrated the file since this one opened it).
        let sql = commitStatement
        let extra = schema.checkpointColumns(writing: schema.version)
        let rows: [[SQLiteValue]] = checkpoints.map { fenced in
            let checkpoint = fenced.checkpoint
            return [
                .text(checkpoint.scope.key), checkpoint.origin.map { .text($0.root) } ?? .null,
                checkpoint.origin?.props.map { .blob($0) } ?? .null,
                .integer(checkpoint.number), .integer(fenced.token.rawValue),
                .integer(Int64(clamping: checkpoint.renderingSequence)), .integer(checkpoint.acceptedEvents),
                .blob(checkpoint.snapshot),
            ] + extra.map { .integer(Int64($0.value(checkpoint))) }
        }
        let written: [Bool]
        do {
            written = try await connection.transaction { database throws(SQLiteFailure) in
                try rows.map { binds throws(SQLiteFailure) in try database.execute(sql, binds) == 1 }
            }
        } catch {
            // Words made only on failure: this runs for every commit.
            let operation =
                checkpoints.count == 1
                ? "committing checkpoint \(checkpoints[0].checkpoint.number) of \(checkpoints[0].checkpoint.scope)"
                : "committing \(checkpoints.count) checkpoints in one transaction"
            return Array(repeating: .failure(.failed(store: path, operation: operation, reason: Self.words(error))), count: checkpoints.count)
        }
        if written.contains(true) { logCheckpointer.committed() }
        if !written.contains(false) { return Array(repeating: .success(()), count: checkpoints.count) }
        let committed = Set(zip(checkpoints, written).compactMap { $1 ? $0.checkpoint.scope.key : nil })
        // Some were refused: the file was migrated by a later release, or their token is not the
        // writer's (read once, for their errors).
        let current: Result<FencingToken, CoordinatorStoreError>
        do throws(CoordinatorStoreError) {
            let found = try await query("reading the schema version", "PRAGMA user_version", []).first?.column("user_version")?.integer ?? 0
            if found != schema.version { throw CoordinatorStoreError.schemaMigrated(store: path, found: found, writes: schema.version) }
            current = .success(try await currentToken())
        } catch {
            current = .failure(error)
        }
        return checkpoints.map { fenced in
            if committed.contains(fenced.checkpoint.scope.key) { return .success(()) }
            switch current {
            case .success(let token): return .failure(.fenced(store: path, offered: fenced.token, current: token))
            case .failure(let error): return .failure(error)
            }
        }
    }

    package func storedSessions() async throws(CoordinatorStoreError) -> [StoredSession] {
        // The listing reads every row's pages: through SQLite's default cache (2 MiB), given back
        // after, so a coordinator holding its sessions passivated keeps none of them (the heap
        // would keep what a full cache took, even once freed).
        _ = try await query("capping the cache for the listing", "PRAGMA cache_size = -\(Self.listingCacheKibibytes)", [])
        let rows = try await query(
            "listing the stored sessions",
            "SELECT scope, root, rendering_sequence FROM coordinator_tree_checkpoint WHERE scope <> ?1 ORDER BY scope",
            [.text(CheckpointScope.sharedKey)])
        _ = try await query("giving back the listing's cache", "PRAGMA shrink_memory", [])
        _ = try await query("restoring the cache", "PRAGMA cache_size = -\(Self.commitCacheKibibytes)", [])
        return try rows.map { row throws(CoordinatorStoreError) in
            guard let key = row.column("scope")?.string, case .session(let id) = CheckpointScope(key: key),
                let root = row.column("root")?.string, let sequence = row.column("rendering_sequence")?.integer
            else { throw .corrupt(store: path, reason: "a session's checkpoint row with a malformed scope, root or sequence") }
            return StoredSession(id: id, root: root, renderingSequence: UInt64(max(0, sequence)))
        }
    }

    package func remove(_ scope: CheckpointScope, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        let rows = try await query(
            "removing the checkpoint of \(scope)",
            """
            DELETE FROM coordinator_tree_checkpoint
            WHERE scope = ?1 AND (SELECT fencing_token FROM coordinator_writer WHERE id = 1) = ?2
            RETURNING number
            """, [.text(scope.key), .integer(token.rawValue)])
        guard rows.isEmpty else { return }
        // Nothing removed: either there was nothing, or a newer writer holds the store.
        let current = try await currentToken()
        if current != token { throw .fenced(store: path, offered: token, current: current) }
    }

    /// The connection's `PRAGMA synchronous` as SQLite reports it (`2`: FULL, `1`: NORMAL), for
    /// tests and operators checking `store.sync`.
    package func synchronousLevel() async throws(CoordinatorStoreError) -> Int {
        try await query("reading PRAGMA synchronous", "PRAGMA synchronous", []).first?.column("synchronous")?.integer ?? -1
    }

    /// The writing connection's `PRAGMA cache_size` (negative: in KiB) and the bytes its cache
    /// holds now, for tests.
    package func cache() async throws -> (size: Int, used: Int) {
        let size = try await query("reading PRAGMA cache_size", "PRAGMA cache_size", []).first?.column("cache_size")?.integer ?? 0
        return (size, try await connection.cacheUsedBytes())
    }

    /// The writing connection's `PRAGMA wal_autocheckpoint` (`0`: SQLite never checkpoints the
    /// log inside a commit) and a checkpoint of the log run now by `SQLiteLogCheckpointer`, for tests.
    package func logCheckpointing() async throws -> (autocheckpoint: Int, log: Int, checkpointed: Int, restarted: Bool) {
        let automatic = try await connection.query("PRAGMA wal_autocheckpoint").first?.column("wal_autocheckpoint")?.integer ?? -1
        let (log, checkpointed, restarted) = try await logCheckpointer.checkpoint()
        return (automatic, log, checkpointed, restarted)
    }

    /// The writer row's token (0: none).
    private func currentToken() async throws(CoordinatorStoreError) -> FencingToken {
        let current = try await query("reading the writer's fencing token", "SELECT fencing_token FROM coordinator_writer WHERE id = 1", [])
            .first?.column("fencing_token")?.integer
        return FencingToken(rawValue: Int64(current ?? 0))
    }

    /// The refusal of a write carrying `token`, naming the writer's current one.
    private func fenced(_ token: FencingToken) async throws(CoordinatorStoreError) -> CoordinatorStoreError {
        .fenced(store: path, offered: token, current: try await currentToken())
    }

    package func close() async {
        await logCheckpointer.close()
        await connection.close()
    }

    private func query(_ operation: String, _ sql: String, _ binds: [SQLiteValue]) async throws(CoordinatorStoreError) -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch {
            throw .failed(store: path, operation: operation, reason: Self.words(error))
        }
    }

    /// SQLite's reason and message, as its error describes itself.
    private static func words(_ error: any Error) -> String {
        "\(error)"
    }
}
