import ClusterTestSupport
import Foundation
import Logging
import Testing
@testable import WorkflowCluster

/// The store's own SQLite binding, against real files: values bound and read back as they
/// were, statements kept and run again, transactions whole or not at all, failures in words.
@Suite("SQLite binding")
struct SQLiteHandleTests {
    static func withConnection(_ label: String, _ body: (SQLiteStoreConnection) async throws -> Void) async throws {
        try await StoreDirectory.with(label) { directory in
            let connection = try await SQLiteStoreConnection.open(
                path: directory.appendingPathComponent("binding.sqlite").path, logger: Logger(label: "test.sqlite"))
            do {
                try await body(connection)
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
        }
    }

    @Test("every storage class is bound and read back as it was: text with a NUL and non-ASCII, an empty and a large blob, 64-bit integers, reals, null")
    func valuesRoundTrip() async throws {
        try await Self.withConnection("values") { connection in
            _ = try await connection.query("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
            let values: [SQLiteValue] = [
                .text("a\u{0}b — ü 🙂"), .text(""), .blob(Data()), .blob(Data((0..<70_000).map { UInt8($0 % 251) })),
                .integer(.max), .integer(.min), .real(-2.5), .null,
            ]
            for (id, value) in values.enumerated() {
                _ = try await connection.query("INSERT INTO t (id, v) VALUES (?1, ?2)", [.integer(Int64(id)), value])
            }
            let rows = try await connection.query("SELECT id, v FROM t ORDER BY id")
            #expect(rows.map { $0.column("v") } == values)
            #expect(rows.map { $0.column("id")?.integer } == values.indices.map { $0 })
            #expect(rows.first?.column("no such column") == nil)
        }
    }

    @Test("a kept statement runs again with new values, also past the most statements kept")
    func statementsKept() async throws {
        try await Self.withConnection("kept") { connection in
            _ = try await connection.query("CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)")
            for k in 0..<(SQLiteHandle.maximumStatements * 2) {
                _ = try await connection.query("INSERT INTO t (k, v) VALUES (?1, ?2)", [.integer(Int64(k)), .integer(Int64(k * 2))])
                // A statement of its own text each turn: the kept ones start over past the bound.
                let read = try await connection.query("SELECT v FROM t WHERE k = \(k)")
                #expect(read.first?.column("v") == .integer(Int64(k * 2)))
            }
            let count = try await connection.query("SELECT count(*) AS n FROM t")
            #expect(count.first?.column("n") == .integer(Int64(SQLiteHandle.maximumStatements * 2)))
        }
    }

    @Test("a transaction commits what its body wrote, or nothing if the body throws; the connection goes on after")
    func transactionsWhole() async throws {
        try await Self.withConnection("transaction") { connection in
            _ = try await connection.query("CREATE TABLE t (k INTEGER PRIMARY KEY)")
            let changed = try await connection.transaction { database throws(SQLiteFailure) in
                try (1...3).map { k throws(SQLiteFailure) in try database.execute("INSERT INTO t (k) VALUES (?1)", [.integer(Int64(k))]) }
            }
            #expect(changed == [1, 1, 1])
            await #expect(throws: SQLiteFailure.self) {
                try await connection.transaction { database throws(SQLiteFailure) in
                    try database.execute("INSERT INTO t (k) VALUES (4)")
                    try database.execute("INSERT INTO t (k) VALUES (1)")  // a duplicate key: the whole transaction goes
                }
            }
            let keys = try await connection.query("SELECT k FROM t ORDER BY k").compactMap { $0.column("k")?.integer }
            #expect(keys == [1, 2, 3])
        }
    }

    @Test("a statement SQLite refuses, and one on a closed connection, fail in words")
    func failuresInWords() async throws {
        try await Self.withConnection("failures") { connection in
            await #expect {
                _ = try await connection.query("SELEKT 1")
            } throws: { error in
                (error as? SQLiteFailure)?.message.contains("syntax error") == true
            }
            await #expect {
                _ = try await connection.query("SELECT * FROM no_such_table")
            } throws: { error in
                (error as? SQLiteFailure)?.message.contains("no such table") == true
            }
            let one = try await connection.query("SELECT 1 AS one")
            #expect(one.first?.column("one") == .integer(1))
            await connection.close()
            await #expect {
                _ = try await connection.query("SELECT 1")
            } throws: { error in
                error is SQLiteFailure
            }
        }
    }
}
