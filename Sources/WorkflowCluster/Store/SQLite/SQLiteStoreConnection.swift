import CSQLite
import Logging
import NIOPosix
import Synchronization

/// One connection to the SQLite store's file, with a thread of its own, closed once.
///
/// SQLite makes a statement that finds the file locked by another connection wait inside the
/// call that runs it (the busy timeout), holding the thread it runs on. On a pool shared by
/// connections (as NIO's blocking pool is, one thread per core) a few such waits hold every
/// thread, and the connection holding the lock cannot run the statement that would release it:
/// all of them wait out the timeout and fail with `database is locked`. A thread per connection
/// makes a wait hold up only that connection's statements, which SQLite runs one at a time
/// anyway. A transaction runs as one call on that thread (`transaction(_:)`), never as
/// statements sent one by one.
///
/// Owns a C handle (`SQLiteHandle`) and a thread: `close()` releases both; one released without
/// it (a caller's error path) is closed as it goes, with a warning.
final class SQLiteStoreConnection: Sendable {
    /// The database file.
    let path: String
    private let handle: SQLiteHandle
    private let thread: NIOThreadPool
    private let closed = Atomic<Bool>(false)
    private let logger: Logger

    private init(path: String, handle: SQLiteHandle, thread: NIOThreadPool, logger: Logger) {
        self.path = path
        self.handle = handle
        self.thread = thread
        self.logger = logger
    }

    /// Opens (creating if missing) the database at `path` on a thread started for it.
    static func open(path: String, logger: Logger) async throws(SQLiteFailure) -> SQLiteStoreConnection {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        do {
            let handle = try await on(thread) { () throws(SQLiteFailure) in try SQLiteHandle.open(path: path) }
            return SQLiteStoreConnection(path: path, handle: handle, thread: thread, logger: logger)
        } catch {
            try? await thread.shutdownGracefully()
            throw error
        }
    }

    /// Runs `sql` with `binds` (`?1`, `?2`, … in order) on the connection's thread and returns
    /// its rows.
    func query(_ sql: String, _ binds: [SQLiteValue] = []) async throws(SQLiteFailure) -> [SQLiteRow] {
        let handle = handle
        return try await Self.on(thread) { () throws(SQLiteFailure) in try handle.rows(sql, binds) }
    }

    /// The bytes the connection's page cache holds now.
    func cacheUsedBytes() async throws(SQLiteFailure) -> Int {
        let handle = handle
        return try await Self.on(thread) { () throws(SQLiteFailure) in handle.cacheUsedBytes() }
    }

    /// Runs `body` inside one transaction (`BEGIN IMMEDIATE`: it waits for the file's write
    /// lock first) as one call on the connection's thread: committed if `body` returns, rolled
    /// back if it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteHandle) throws(SQLiteFailure) -> T) async throws(SQLiteFailure) -> T {
        let handle = handle
        return try await Self.on(thread) { () throws(SQLiteFailure) in
            try handle.execute("BEGIN IMMEDIATE")
            do throws(SQLiteFailure) {
                let result = try body(handle)
                try handle.execute("COMMIT")
                return result
            } catch {
                _ = try? handle.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Closes the connection and stops its thread (once; later calls return at once).
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let handle = handle
        try? await thread.runIfActive { handle.close() }
        try? await thread.shutdownGracefully()
    }

    deinit {
        guard !closed.load(ordering: .acquiring) else { return }
        logger.warning("an SQLite connection to the store was released without being closed; closing it now", metadata: ["store": "\(path)"])
        handle.close()
        thread.shutdownGracefully { _ in }
    }

    /// Runs `work` on `thread`, SQLite's failures passed on as they are.
    private static func on<T: Sendable>(
        _ thread: NIOThreadPool, _ work: @escaping @Sendable () throws(SQLiteFailure) -> T
    ) async throws(SQLiteFailure) -> T {
        do {
            return try await thread.runIfActive { try work() }
        } catch let failure as SQLiteFailure {
            throw failure
        } catch {
            throw SQLiteFailure(code: SQLITE_MISUSE, message: "the store's connection thread has stopped (\(error))")
        }
    }
}
