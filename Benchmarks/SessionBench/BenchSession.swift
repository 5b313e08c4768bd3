import Foundation

/// A session the load created, as its ids file keeps it: one line `ID URL`, its id and the
/// gateway it was created on (its owner, when sessions are spread over several coordinators).
struct BenchSession: Sendable, Hashable {
    var id: String
    /// `http://HOST:PORT` of the coordinator the session was created on.
    var url: String

    /// The session's API prefix on a gateway.
    var api: String { "/api/sessions/\(id)" }

    /// The sessions of `file`, in its order (none when it does not exist yet).
    static func read(_ file: String) throws -> [BenchSession] {
        guard FileManager.default.fileExists(atPath: file) else { return [] }
        return try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            guard fields.count == 2 else { throw LoadFailure("\(file): not an `ID URL` line: \(line)") }
            return BenchSession(id: String(fields[0]), url: String(fields[1]))
        }
    }

    /// Adds `sessions` at the end of `file` (creating it).
    static func append(_ sessions: [BenchSession], to file: String) throws {
        let text = Data(sessions.map { "\($0.id) \($0.url)\n" }.joined().utf8)
        guard FileManager.default.fileExists(atPath: file) else {
            try text.write(to: URL(fileURLWithPath: file))
            return
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: text)
    }
}
