import Testing
import Workflow

// The seeds' tic-tac-toe driven through a host like an app would (its actions are tested with
// `WorkflowActionTester` in TicTacToeActionTests).

@Suite struct TicTacToeHostTests {
    @Test func ticTacToePlaysToAWin() async throws {
        let host = WorkflowHost(workflow: TicTacToeWorkflow())
        let outputs = host.outputs
        #expect(host.rendering.currentTurn == "X")

        // X: 0, 1, 2 (top row); O: 3, 4.
        for (move, cell) in [0, 3, 1, 4, 2].enumerated() {
            host.rendering.onTap.send(cell)
            try await rendering(of: host, where: { $0.cells.filter { $0 != " " }.count == move + 1 })
        }
        #expect(await next(1, from: outputs) == [.won(.x)])
        #expect(host.rendering.cells == ["X", "X", "X", "O", "O", " ", " ", " ", " "])

        // The game is over: further taps change nothing.
        host.rendering.onTap.send(8)
        _ = await host.treeDescription()  // loop barrier
        #expect(host.rendering.cells[8] == " ")
        await host.stop()
    }

}

/// Iterates `host.renderings` until a rendering satisfies `predicate`.
private func rendering<W>(of host: WorkflowHost<W>, where predicate: @escaping @Sendable (W.Rendering) -> Bool) async throws {
    for await rendering in host.renderings where predicate(rendering) { return }
    Issue.record("renderings of \(W.self) finished before the predicate held")
}

/// The next `count` elements of `stream`.
private func next<T: Sendable>(_ count: Int, from stream: AsyncStream<T>) async -> [T] {
    var taken: [T] = []
    for await element in stream {
        taken.append(element)
        if taken.count == count { break }
    }
    return taken
}
