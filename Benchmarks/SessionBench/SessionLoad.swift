import Foundation

/// The load of scripts/bench-sessions.sh: creating sessions, events spread over them with each
/// one's renderings watched on its WebSocket stream, and a coordinator's sessions taken over by
/// the others once it is killed.
enum SessionLoad {
    static let usage = """
        usage: create URL COUNT IDS_FILE [TOTAL] | events IDS_FILE SESSIONS RATE SECONDS [ACCEPTED_FILE] \
        | shared URL RATE SECONDS | takeover PID DEAD_URL IDS_FILE ACCEPTED_FILE
        """

    static func run(_ arguments: [String]) async throws {
        let command = arguments.first ?? ""
        let operands = Array(arguments.dropFirst())
        switch (command, operands.count) {
        case ("create", 3...4):
            try await create(
                url: operands[0], count: number(operands[1]), idsFile: operands[2], total: operands.count > 3 ? number(operands[3]) : nil)
        case ("events", 4...5):
            let sessions = try BenchSession.read(operands[0])
            let count: Int = try number(operands[1])
            guard sessions.count >= count else { throw LoadFailure("\(operands[0]) holds \(sessions.count) sessions, not \(count)") }
            try await events(
                to: Array(sessions.prefix(count)), rate: number(operands[2]), seconds: number(operands[3]),
                acceptedFile: operands.count > 4 ? operands[4] : nil)
        case ("shared", 3):
            try await events(toSharedRootOf: operands[0], rate: number(operands[1]), seconds: number(operands[2]))
        case ("takeover", 4):
            try await takeover(pid: number(operands[0]), deadURL: operands[1], idsFile: operands[2], acceptedFile: operands[3])
        default:
            throw LoadFailure(usage)
        }
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Seconds from `start` to `end` (nanoseconds of `now()`).
    static func elapsed(from start: UInt64, to end: UInt64) -> Double { Double(end - start) / 1e9 }

    /// `text` as a number, or a failure naming it.
    static func number<T: LosslessStringConvertible>(_ text: String) throws -> T {
        guard let value = T(text) else { throw LoadFailure("not a number: \(text)\n\(usage)") }
        return value
    }

    /// Prints `summary` as one JSON line on standard output (what the script reads).
    static func printJSON(_ summary: [String: Any]) throws {
        let json = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }

    /// Writes `line` to standard error (progress, for whoever watches the run).
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data("session-bench load: \(line)\n".utf8))
    }
}
