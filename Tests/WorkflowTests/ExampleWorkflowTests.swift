import Testing
import Workflow
import WorkflowExamples

// The seeds' example workflows, driven through a host like an app would.

@Suite struct ExampleWorkflowTests {
    @Test func emailBrowserShowsTheMessageSelectedInTheInbox() async throws {
        let host = WorkflowHost(workflow: EmailBrowserWorkflow(messageIDs: [1, 2, 3, 4, 5]))
        #expect(host.rendering.inbox.messages.map(\.id) == [1, 2, 3, 4, 5])
        #expect(host.rendering.message.messageID == nil)

        host.rendering.inbox.onMessageSelected.send(3)
        let screen = try await rendering(of: host) { $0.message.messageID == 3 }
        #expect(screen.message.subject == MessageStore.subject(of: 3))
        #expect(screen.message.body == MessageStore.body(of: 3))

        screen.inbox.onMessageSelected.send(5)
        try await rendering(of: host) { $0.message.messageID == 5 }
        await host.stop()
    }

    @Test func emailBrowserSelectionSurvivesASnapshot() async throws {
        let host = WorkflowHost(workflow: EmailBrowserWorkflow())
        host.rendering.inbox.onMessageSelected.send(4)
        try await rendering(of: host) { $0.message.messageID == 4 }
        let snapshot = await host.snapshot()
        await host.stop()

        let observer = RecordingObserver()
        let restored = WorkflowHost(workflow: EmailBrowserWorkflow(), observers: [observer], snapshot: snapshot)
        #expect(restored.rendering.message.messageID == 4)
        // The stateless panes had nothing to save; starting them fresh is not a rejected snapshot.
        #expect(!observer.events.contains { if case .snapshotRejected = $0 { true } else { false } })
        await restored.stop()
    }

    @Test func ticTacToePlaysToAWin() async throws {
        let host = WorkflowHost(workflow: TicTacToeWorkflow())
        let outputs = host.outputs
        #expect(host.rendering.currentTurn == "X")

        // X: 0, 1, 2 (top row); O: 3, 4.
        for (move, cell) in [0, 3, 1, 4, 2].enumerated() {
            host.rendering.onTap.send(cell)
            try await rendering(of: host) { $0.cells.filter { $0 != " " }.count == move + 1 }
        }
        #expect(try await next(1, from: outputs) == [.won(.x)])
        #expect(host.rendering.cells == ["X", "X", "X", "O", "O", " ", " ", " ", " "])

        // The game is over: further taps change nothing.
        host.rendering.onTap.send(8)
        _ = await host.treeDescription()  // loop barrier
        #expect(host.rendering.cells[8] == " ")
        await host.stop()
    }

    @Test func placeholderPanesRefuseEventsInsteadOfDroppingThem() throws {
        let inbox = InboxWorkflow(messageIDs: [1, 2]).placeholderRendering()
        #expect(inbox.onMessageSelected.send(1) == false, "a tap on a placeholder must not claim it was taken")
    }
}
