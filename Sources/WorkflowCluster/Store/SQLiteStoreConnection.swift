import Logging
import NIOPosix
import SQLiteNIO
import Synchronization

/// One connection to the SQLite store's file, with a thread of its own, closed once.
///
/// SQLite makes a statement that finds the file locked by another connection wait inside the
/// call that runs it (the busy timeout), holding the thread it runs on. On the process's shared
/// blocking pool (`NIOThreadPool.singleton`, one thread per core, SQLiteNIO's default) a few
/// such waits hold every thread, and the connection holding the lock, in a transaction of
/// several statements (each its own call), cannot run the statement that would release it: all
/// of them wait out the timeout and fail with `database is locked`. A thread per connection
/// makes a wait hold up only that connection's statements, which SQLite runs one at a time
/// anyway.
///
/// Owns a C handle (through `SQLiteConnection`) and a thread: `close()` releases both; one
/// released without it (a caller's error path) is closed in the background with a warning
/// rather than left open (`SQLiteConnection` treats that as a programming error and stops a
/// debug build).
final class SQLiteStoreConnection: Sendable {
    /// The database file.
    let path: String
    private let connection: SQLiteConnection
    private let thread: NIOThreadPool
    private let closed = Atomic<Bool>(false)
    private let logger: Logger

    private init(path: String, connection: SQLiteConnection, thread: NIOThreadPool, logger: Logger) {
        self.path = path
        self.connection = connection
        self.thread = thread
        self.logger = logger
    }

    /// Opens (creating if missing) the database at `path` on a thread started for it.
    static func open(path: String, logger: Logger) async throws -> SQLiteStoreConnection {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        do {
            let connection = try await SQLiteConnection.open(
                storage: .file(path: path), threadPool: thread, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())
            return SQLiteStoreConnection(path: path, connection: connection, thread: thread, logger: logger)
        } catch {
            try? await thread.shutdownGracefully()
            throw error
        }
    }

    /// Runs `sql` with `binds` on the connection's thread and returns its rows.
    func query(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        try await connection.query(sql, binds)
    }

    /// Closes the connection and stops its thread (once; later calls return at once).
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? await connection.close()
        try? await thread.shutdownGracefully()
    }

    deinit {
        guard !closed.load(ordering: .acquiring) else { return }
        logger.warning("an SQLite connection to the store was released without being closed; closing it now", metadata: ["store": "\(path)"])
        let connection = connection
        let thread = thread
        Task {
            try? await connection.close()
            try? await thread.shutdownGracefully()
        }
    }
}
