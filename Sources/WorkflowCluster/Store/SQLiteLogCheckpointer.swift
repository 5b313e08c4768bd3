import Logging
import SQLiteNIO
import Synchronization

/// Moves the SQLite store's write-ahead log into the database file off the commit path.
///
/// Left to itself, SQLite checkpoints the log inside the commit that makes it reach 1,000 pages:
/// that commit, and with it every tree's checkpoint waiting behind it in `GroupCommit`, then
/// waits while the log's pages are copied and fsynced. With 1,000 sessions' snapshots a second
/// the log fills in seconds, and those stalls make the tail of the event latency. So the store
/// turns SQLite's own checkpoints off on its writing connection (`wal_autocheckpoint = 0`) and
/// this runs them instead, on a connection of its own: `PASSIVE` checkpoints, which never block
/// the writer (commits go on appending to the log meanwhile), whenever commits added to the log,
/// at most every `interval`. Durability does not change: a commit is in the log (fsynced, with
/// `store.sync: "full"`) before it is answered, and a crash before a checkpoint leaves it in the
/// log, which SQLite replays when the file is opened again.
final class SQLiteLogCheckpointer: Sendable {
    private let connection: SQLiteConnection
    private let written = Atomic<Bool>(false)
    private let running: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let logger: Logger

    private init(connection: SQLiteConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Opens its connection to `path` (already in WAL mode, with `sync`) and starts checkpointing
    /// every `interval` after commits.
    static func start(path: String, sync: StoreSettings.Sync, interval: Duration, logger: Logger) async throws -> SQLiteLogCheckpointer {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            _ = try await connection.query(sync == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        } catch {
            try? await connection.close()
            throw error
        }
        let checkpointer = SQLiteLogCheckpointer(connection: connection, logger: logger)
        let task = Task { [weak checkpointer] in
            while (try? await Task.sleep(for: interval)) != nil {
                guard let checkpointer else { return }
                guard checkpointer.written.exchange(false, ordering: .acquiringAndReleasing) else { continue }
                do {
                    _ = try await checkpointer.checkpoint()
                } catch {
                    checkpointer.logger.warning("the store's write-ahead log could not be checkpointed (it keeps growing until it can): \(error)")
                }
            }
        }
        checkpointer.running.withLock { $0 = task }
        return checkpointer
    }

    /// Commits added to the log: checkpoint it at the next turn.
    func committed() {
        written.store(true, ordering: .releasing)
    }

    /// Checkpoints the log now (`PASSIVE`): how many frames the log holds and how many of them
    /// are in the database file afterwards.
    func checkpoint() async throws -> (log: Int, checkpointed: Int) {
        let row = try await connection.query("PRAGMA wal_checkpoint(PASSIVE)").first
        return (row?.column("log")?.integer ?? -1, row?.column("checkpointed")?.integer ?? -1)
    }

    /// Stops checkpointing and closes its connection (what the log still holds is checkpointed
    /// by SQLite when the last connection to the file closes).
    func close() async {
        let task = running.withLock { $0.take() }
        task?.cancel()
        await task?.value
        try? await connection.close()
    }
}
