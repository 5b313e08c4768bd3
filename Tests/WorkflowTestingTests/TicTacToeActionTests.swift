import Testing
import Workflow
import WorkflowTesting

extension TicTacToeWorkflow: DefaultInitializableWorkflow {}

@Suite("WorkflowActionTester with tic-tac-toe")
struct TicTacToeActionTests {
    typealias Action = TicTacToeWorkflow.Action

    @Test("three in a row wins for X and reports .won(.x)")
    func winReportsOutput() {
        // X: 0, 1, 2 (top row); O: 3, 4.
        let tester = Action.tester(withState: TicTacToeWorkflow.State())
            .send(action: .tap(index: 0)).assertNoOutput()
            .send(action: .tap(index: 3))
            .send(action: .tap(index: 1))
            .send(action: .tap(index: 4))
            .send(action: .tap(index: 2))
            .assert(output: .won(.x))
            .assert { state in
                #expect(state.winner == .x)
                #expect(state.spaces[0...2].allSatisfy { $0 == .filled(.x) })
            }
        #expect(tester.output == .won(.x))
    }

    @Test("tapping a filled cell changes nothing")
    func tapOnFilledCellIsIgnored() {
        let afterFirstMove = Action.tester(withState: TicTacToeWorkflow.State(), workflow: TicTacToeWorkflow())
            .send(action: .tap(index: 4))
        let state = afterFirstMove.state
        #expect(state.currentTurn == .o)

        afterFirstMove
            .send(action: .tap(index: 4))
            .assert(state: state)
            .assertNoOutput()
    }

    @Test("a tap on the rendered board goes through the sink and applies the move")
    func renderedTapAppliesMove() {
        var expected = TicTacToeWorkflow.State()
        expected.spaces[4] = .filled(.x)
        expected.currentTurn = .o

        TicTacToeWorkflow()
            .renderTester()
            .render { board in
                #expect(board.cells == Array(repeating: " ", count: 9))
                #expect(board.currentTurn == "X")
                board.onTap.send(4)
            }
            .assert(state: expected)
            .assertNoOutput()
    }
}
