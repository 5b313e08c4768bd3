import Workflow

/// The seeds' tic-tac-toe game: two players take turns filling a 3×3 board.
public struct TicTacToeWorkflow: Workflow, Codable, Equatable, Sendable {
    public init() {}

    /// The seeds' game state.
    public struct State: Codable, Equatable, Sendable {
        public enum Player: String, Codable, Sendable { case x, o }
        public enum Space: Codable, Equatable, Sendable {
            case unfilled
            case filled(Player)
        }

        /// 3 rows × 3 columns.
        public var spaces: [Space] = Array(repeating: .unfilled, count: 9)
        public var currentTurn: Player = .x

        public init() {}

        /// The player with three in a row, if any.
        public var winner: Player? {
            let lines = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]
            for line in lines {
                if case .filled(let player) = spaces[line[0]], spaces[line[1]] == .filled(player),
                    spaces[line[2]] == .filled(player)
                {
                    return player
                }
            }
            return nil
        }
    }

    /// How a game ended.
    public enum Output: Codable, Equatable, Sendable {
        case won(State.Player)
        case draw
    }

    /// A move by the player whose turn it is.
    public enum Action: WorkflowAction, Sendable {
        public typealias WorkflowType = TicTacToeWorkflow
        case tap(index: Int)

        public func apply(toState state: inout State, context: ApplyContext<TicTacToeWorkflow>) -> Output? {
            switch self {
            case .tap(let index):
                guard state.spaces.indices.contains(index), state.spaces[index] == .unfilled, state.winner == nil else {
                    return nil
                }
                state.spaces[index] = .filled(state.currentTurn)
                if let winner = state.winner { return .won(winner) }
                if !state.spaces.contains(.unfilled) { return .draw }
                state.currentTurn = state.currentTurn == .x ? .o : .x
                return nil
            }
        }
    }

    public func makeInitialState() -> State { State() }

    public func render(state: State, context: RenderContext<TicTacToeWorkflow>) -> BoardScreen {
        BoardScreen(
            cells: state.spaces.map { space in
                switch space {
                case .unfilled: " "
                case .filled(let player): player.rawValue.uppercased()
                }
            },
            currentTurn: state.currentTurn.rawValue.uppercased(),
            onTap: context.makeSink(of: Action.self).contraMap { Action.tap(index: $0) })
    }
}

/// The board: nine cells ("X", "O" or " "), whose turn it is, and the tap handler.
public struct BoardScreen: Sendable {
    public var cells: [String]
    public var currentTurn: String
    /// Taps the cell at an index 0…8.
    public var onTap: Sink<Int>
}
