import Foundation
import Logging
import SQLiteNIO

/// The embedded coordinator store: one SQLite file in WAL mode, `synchronous=FULL`, so a
/// committed checkpoint is on disk (the WAL fsynced) before `commit` returns.
///
/// Two single-row tables: the writer (its fencing token and name) and the latest checkpoint.
/// A commit is one statement that writes the checkpoint only if the token it carries is the
/// writer row's, so checking the token and writing are one atomic transaction. Opening the file
/// as writer raises the token: the embedded store has no lease expiry (one machine, one file);
/// whoever opens the file last is its writer, and an earlier process still running is fenced.
///
/// SQLite's source is compiled into the binary (sqlite-nio), so a fresh machine needs no
/// system package; calls run on NIO's shared blocking-I/O thread pool, off the caller's thread.
public final class SQLiteCoordinatorStore: CoordinatorStore {
    /// The database file.
    public let path: String
    private let connection: SQLiteConnection

    private init(path: String, connection: SQLiteConnection) {
        self.path = path
        self.connection = connection
    }

    /// Opens (creating if missing) the database at `path` and prepares its tables. A path in a
    /// directory that does not exist, a file that is not an SQLite database or one this user
    /// cannot write is `CoordinatorStoreError.cannotOpen` with the reason in words.
    public static func open(path: String, logger: Logger = Logger(label: "workflow.cluster.store")) async throws(CoordinatorStoreError)
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
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw .cannotOpen(store: path, reason: Self.words(error))
        }
        let store = SQLiteCoordinatorStore(path: path, connection: connection)
        do {
            let mode = try await connection.query("PRAGMA journal_mode = WAL").first?.column("journal_mode")?.string
            guard mode?.lowercased() == "wal" else {
                try? await connection.close()
                throw CoordinatorStoreError.cannotOpen(store: path, reason: "SQLite refused write-ahead logging (journal mode \(mode ?? "unknown"))")
            }
            _ = try await connection.query("PRAGMA synchronous = FULL")
            _ = try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS coordinator_writer (
                    id INTEGER PRIMARY KEY CHECK (id = 1), fencing_token INTEGER NOT NULL, holder TEXT NOT NULL, since TEXT NOT NULL)
                """)
            _ = try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS coordinator_checkpoint (
                    id INTEGER PRIMARY KEY CHECK (id = 1), number INTEGER NOT NULL, fencing_token INTEGER NOT NULL,
                    rendering_sequence INTEGER NOT NULL, accepted_events INTEGER NOT NULL, snapshot BLOB NOT NULL,
                    committed_at TEXT NOT NULL)
                """)
        } catch let error as CoordinatorStoreError {
            throw error
        } catch {
            try? await connection.close()
            throw .cannotOpen(store: path, reason: Self.words(error))
        }
        return store
    }

    public func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken {
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

    public func latestCheckpoint() async throws(CoordinatorStoreError) -> CoordinatorCheckpoint? {
        let rows = try await query(
            "reading the latest checkpoint",
            "SELECT number, rendering_sequence, accepted_events, snapshot FROM coordinator_checkpoint WHERE id = 1", [])
        guard let row = rows.first else { return nil }
        guard let number = row.column("number")?.integer, let sequence = row.column("rendering_sequence")?.integer,
            let accepted = row.column("accepted_events")?.integer, let snapshot = row.column("snapshot")?.blob
        else { throw .corrupt(store: path, reason: "a checkpoint row with a missing or mistyped column") }
        return CoordinatorCheckpoint(
            number: Int64(number), renderingSequence: UInt64(max(0, sequence)), acceptedEvents: Int64(accepted),
            snapshot: Data(snapshot.readableBytesView))
    }

    public func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        // One statement, so one transaction: the token check and the write cannot be separated.
        let rows = try await query(
            "committing checkpoint \(checkpoint.number)",
            """
            INSERT INTO coordinator_checkpoint (id, number, fencing_token, rendering_sequence, accepted_events, snapshot, committed_at)
            SELECT 1, ?1, ?2, ?3, ?4, ?5, datetime('now')
            WHERE (SELECT fencing_token FROM coordinator_writer WHERE id = 1) = ?2
            ON CONFLICT (id) DO UPDATE SET number = excluded.number, fencing_token = excluded.fencing_token,
                rendering_sequence = excluded.rendering_sequence, accepted_events = excluded.accepted_events,
                snapshot = excluded.snapshot, committed_at = excluded.committed_at
            RETURNING number
            """,
            [
                .integer(SQLiteInt64(checkpoint.number)), .integer(SQLiteInt64(token.rawValue)),
                .integer(SQLiteInt64(clamping: checkpoint.renderingSequence)), .integer(SQLiteInt64(checkpoint.acceptedEvents)),
                .blob(ByteBuffer(bytes: checkpoint.snapshot)),
            ])
        guard rows.isEmpty else { return }
        let current = try await query("reading the writer's fencing token", "SELECT fencing_token FROM coordinator_writer WHERE id = 1", [])
            .first?.column("fencing_token")?.integer
        throw .fenced(store: path, offered: token, current: FencingToken(rawValue: Int64(current ?? 0)))
    }

    public func close() async {
        try? await connection.close()
    }

    private func query(_ operation: String, _ sql: String, _ binds: [SQLiteData]) async throws(CoordinatorStoreError) -> [SQLiteRow] {
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
