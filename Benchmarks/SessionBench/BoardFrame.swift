import Foundation
import WorkflowGateway

/// What the load reads of a "board" rendering (the envelope of `GET …/rendering` and of each
/// stream message): its counter's count (-1 until the worker rendered it) and its sink's token.
struct BoardFrame: Decodable, Sendable {
    struct Board: Decodable, Sendable {
        struct Counter: Decodable, Sendable {
            var count: Int
            var onIncrement: String?
        }
        var c: Counter
    }
    var rendering: Board

    static func decode(_ text: String) -> BoardFrame? {
        try? JSONDecoder().decode(BoardFrame.self, from: Data(text.utf8))
    }

    /// The counter of a board rendering a delta client has applied.
    static func counter(in rendering: JSONValue) -> Board.Counter? {
        guard case .object(let board) = rendering, case .object(let counter)? = board["c"], case .integer(let count)? = counter["count"] else {
            return nil
        }
        if case .string(let token)? = counter["onIncrement"] { return Board.Counter(count: Int(count), onIncrement: token) }
        return Board.Counter(count: Int(count), onIncrement: nil)
    }
}
