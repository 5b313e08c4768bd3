import Foundation

/// A value bound to an SQLite statement or read from a row: SQLite's five storage classes.
enum SQLiteValue: Sendable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case null

    /// The value as an integer, if it is one.
    var integer: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }

    /// The value as text, if it is text.
    var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The value's bytes, if it is a blob.
    var blob: Data? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// One row a statement returned: its columns' names and values, in order.
struct SQLiteRow: Sendable {
    /// The columns' names, shared by every row of one statement.
    let names: [String]
    let values: [SQLiteValue]

    /// The value of the column named `name` (`nil`: no such column).
    func column(_ name: String) -> SQLiteValue? {
        names.firstIndex(of: name).map { values[$0] }
    }
}

/// An SQLite call that failed: SQLite's result code and its message in words.
struct SQLiteFailure: Error, CustomStringConvertible {
    /// SQLite's (extended) result code.
    let code: Int32
    /// SQLite's message: what went wrong, in words.
    let message: String

    var description: String { message }
}
