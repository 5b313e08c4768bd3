import Logging
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
///
/// The log is bounded too. SQLite starts writing the log from its beginning again only when a
/// commit begins with every frame already checkpointed; under commits that never pause, a
/// `PASSIVE` checkpoint always ends with newer frames behind it, and the log would grow as long as
/// the load lasts. So once it holds `restartFrames` frames, a `RESTART` checkpoint follows: it
/// waits for the commit in progress, holds the next ones back (the writer's busy timeout) while
/// it copies what the `PASSIVE` one left (little) and makes the next commit start the log again;
/// the writer's `journal_size_limit` then shrinks the file to `restartFrames` pages' worth.
final class SQLiteLogCheckpointer: Sendable {
    /// The log's frames (pages) beyond which a checkpoint restarts it: 4,096 (16 MiB of 4 KiB
    /// pages, SQLite's default page size).
    static let defaultRestartFrames = 4_096
    /// How long a commit waits for a `RESTART` checkpoint (and a checkpoint for a commit).
    static let busyTimeoutMilliseconds = 10_000

    private let connection: SQLiteStoreConnection
    private let restartFrames: Int
    private let written = Atomic<Bool>(false)
    private let running: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let logger: Logger

    private init(connection: SQLiteStoreConnection, restartFrames: Int, logger: Logger) {
        self.connection = connection
        self.restartFrames = restartFrames
        self.logger = logger
    }

    /// Opens its connection to `path` (already in WAL mode, with `sync`) and starts checkpointing
    /// every `interval` after commits, restarting the log once it holds `restartFrames` frames.
    static func start(
        path: String, sync: StoreSettings.Sync, interval: Duration, restartFrames: Int = defaultRestartFrames, logger: Logger
    ) async throws -> SQLiteLogCheckpointer {
        let connection = try await SQLiteStoreConnection.open(path: path, logger: logger)
        do {
            _ = try await connection.query(sync == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            _ = try await connection.query("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
        } catch {
            await connection.close()
            throw error
        }
        let checkpointer = SQLiteLogCheckpointer(connection: connection, restartFrames: max(1, restartFrames), logger: logger)
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

    /// Checkpoints the log now (`PASSIVE`, then `RESTART` if the log holds `restartFrames` frames
    /// or more): how many frames the log held and how many of them are in the database file
    /// afterwards, and whether it was restarted.
    func checkpoint() async throws -> (log: Int, checkpointed: Int, restarted: Bool) {
        let passive = try await Self.run("PASSIVE", on: connection)
        guard passive.log >= restartFrames else { return (passive.log, passive.checkpointed, false) }
        let restart = try await Self.run("RESTART", on: connection)
        // `busy`: a commit or a reader outlasted the busy timeout; the next turn tries again.
        return (restart.log, restart.checkpointed, !restart.busy)
    }

    private static func run(_ mode: String, on connection: SQLiteStoreConnection) async throws(SQLiteFailure) -> (busy: Bool, log: Int, checkpointed: Int) {
        let row = try await connection.query("PRAGMA wal_checkpoint(\(mode))").first
        return (row?.column("busy")?.integer == 1, row?.column("log")?.integer ?? -1, row?.column("checkpointed")?.integer ?? -1)
    }

    /// Stops checkpointing and closes its connection (what the log still holds is checkpointed
    /// by SQLite when the last connection to the file closes).
    func close() async {
        let task = running.withLock { $0.take() }
        task?.cancel()
        await task?.value
        await connection.close()
    }
}
