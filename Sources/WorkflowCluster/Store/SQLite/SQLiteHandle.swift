import CSQLite
import Foundation
import Synchronization

/// The C handle of one SQLite connection and the statements prepared on it, which it keeps.
///
/// SQLite compiles a statement's text into a program before running it; for the store's small
/// statements that is most of their cost (about 60 % of a one-row commit, measured), so the
/// statements are prepared once (`SQLITE_PREPARE_PERSISTENT`) and kept by their text, and each
/// run only binds, steps and resets. The handle is used from its connection's thread only
/// (`SQLiteStoreConnection`). `@unchecked Sendable`: it owns the C handle and the statements,
/// and touches them only holding `lock` (never contended; it is what makes sharing the handle
/// with that thread sound).
final class SQLiteHandle: @unchecked Sendable {
    /// The most statements kept: the store runs a handful; past this the cache starts over.
    static let maximumStatements = 64

    private let lock = Mutex(())
    /// `nil` once closed. Guarded by `lock`.
    private var database: OpaquePointer?
    /// The kept statements by their text. Guarded by `lock`.
    private var statements: [String: OpaquePointer] = [:]

    private init(database: OpaquePointer) {
        self.database = database
    }

    /// Opens (creating if missing) the database at `path`. The connection is used by one thread at
    /// a time (`SQLITE_OPEN_NOMUTEX`); extended result codes name a failure precisely.
    static func open(path: String) throws(SQLiteFailure) -> SQLiteHandle {
        var database: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = sqlite3_open_v2(path, &database, flags, nil)
        guard code == SQLITE_OK, let database else {
            let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(database)
            throw SQLiteFailure(code: code, message: message)
        }
        return SQLiteHandle(database: database)
    }

    /// Runs `sql` with `binds` (`?1`, `?2`, … in order) and returns every row it produced.
    func rows(_ sql: String, _ binds: [SQLiteValue] = []) throws(SQLiteFailure) -> [SQLiteRow] {
        try withStatement(sql, binds) { statement, database throws(SQLiteFailure) in
            var rows: [SQLiteRow] = []
            var names: [String]?
            while try Self.step(statement, database) {
                let count = sqlite3_column_count(statement)
                let columnNames = names ?? (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) }
                names = columnNames
                rows.append(SQLiteRow(names: columnNames, values: (0..<count).map { Self.value(statement, $0) }))
            }
            return rows
        }
    }

    /// Runs `sql` with `binds` to its end, discarding any rows, and returns how many rows it
    /// inserted, updated or deleted.
    @discardableResult
    func execute(_ sql: String, _ binds: [SQLiteValue] = []) throws(SQLiteFailure) -> Int {
        try withStatement(sql, binds) { statement, database throws(SQLiteFailure) in
            while try Self.step(statement, database) {}
            return Int(sqlite3_changes64(database))
        }
    }

    /// The bytes the connection's page cache holds now (`SQLITE_DBSTATUS_CACHE_USED`).
    func cacheUsedBytes() -> Int {
        lock.withLock { _ in
            var current: Int32 = 0
            var highest: Int32 = 0
            guard let database, sqlite3_db_status(database, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0) == SQLITE_OK else { return 0 }
            return Int(current)
        }
    }

    /// Finalizes the kept statements and closes the connection (once).
    func close() {
        lock.withLock { _ in
            for statement in statements.values { sqlite3_finalize(statement) }
            statements = [:]
            sqlite3_close_v2(database)
            database = nil
        }
    }

    deinit {
        close()
    }

    /// Runs `body` with `sql`'s kept statement (prepared now if new), `binds` bound; resets the
    /// statement afterwards, whatever `body` did.
    private func withStatement<T>(
        _ sql: String, _ binds: [SQLiteValue], _ body: (OpaquePointer, OpaquePointer) throws(SQLiteFailure) -> T
    ) throws(SQLiteFailure) -> T {
        try lock.withLock { (_: inout Void) throws(SQLiteFailure) -> T in
            guard let database else {
                throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed")
            }
            let statement: OpaquePointer
            if let kept = statements[sql] {
                statement = kept
            } else {
                var prepared: OpaquePointer?
                let code = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
                guard code == SQLITE_OK, let prepared else {
                    sqlite3_finalize(prepared)
                    throw Self.failure(code, database)
                }
                if statements.count >= Self.maximumStatements {
                    for kept in statements.values { sqlite3_finalize(kept) }
                    statements = [:]
                }
                statements[sql] = prepared
                statement = prepared
            }
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            for (index, value) in binds.enumerated() {
                let code = Self.bind(value, at: Int32(index + 1), to: statement)
                guard code == SQLITE_OK else { throw Self.failure(code, database) }
            }
            return try body(statement, database)
        }
    }

    /// Steps `statement` once: `true` with a row to read, `false` at its end.
    private static func step(_ statement: OpaquePointer, _ database: OpaquePointer) throws(SQLiteFailure) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw failure(code, database)
        }
    }

    private static func bind(_ value: SQLiteValue, at index: Int32, to statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let integer):
            return sqlite3_bind_int64(statement, index, integer)
        case .real(let real):
            return sqlite3_bind_double(statement, index, real)
        case .text(let text):
            var text = text
            return text.withUTF8 { bytes in
                sqlite3_bind_text64(statement, index, bytes.baseAddress, UInt64(bytes.count), csqlite_transient(), UInt8(SQLITE_UTF8))
            }
        case .blob(let data):
            guard !data.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return data.withUnsafeBytes { bytes in
                sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), csqlite_transient())
            }
        case .null:
            return sqlite3_bind_null(statement, index)
        }
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let bytes = sqlite3_column_blob(statement, column), count > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    private static func failure(_ code: Int32, _ database: OpaquePointer) -> SQLiteFailure {
        SQLiteFailure(code: code, message: String(cString: sqlite3_errmsg(database)))
    }
}
