import Testing
import Workflow
import EmailBrowser

// The email browser's workflows, driven through a host like an app would.

@Suite struct EmailBrowserWorkflowTests {
    @Test func emailBrowserShowsTheMessageSelectedInTheInbox() async throws {
        let host = WorkflowHost(workflow: EmailBrowserWorkflow(messageIDs: [1, 2, 3, 4, 5]))
        #expect(host.rendering.inbox.messages.map(\.id) == [1, 2, 3, 4, 5])
        #expect(host.rendering.message.messageID == nil)

        host.rendering.inbox.onMessageSelected.send(3)
        let screen = try await rendering(of: host, where: { $0.message.messageID == 3 })
        #expect(screen.message.subject == MessageStore.subject(of: 3))
        #expect(screen.message.body == MessageStore.body(of: 3))

        screen.inbox.onMessageSelected.send(5)
        try await rendering(of: host, where: { $0.message.messageID == 5 })
        await host.stop()
    }

    @Test func emailBrowserSelectionSurvivesASnapshot() async throws {
        let host = WorkflowHost(workflow: EmailBrowserWorkflow())
        host.rendering.inbox.onMessageSelected.send(4)
        try await rendering(of: host, where: { $0.message.messageID == 4 })
        let snapshot = await host.snapshot()
        await host.stop()

        let observer = RejectedSnapshots()
        let restored = WorkflowHost(workflow: EmailBrowserWorkflow(), observers: [observer], snapshot: snapshot)
        #expect(restored.rendering.message.messageID == 4)
        // The stateless panes had nothing to save; starting them fresh is not a rejected snapshot.
        #expect(observer.paths.isEmpty)
        await restored.stop()
    }

    @Test func placeholderPanesRefuseEventsInsteadOfDroppingThem() throws {
        let inbox = InboxWorkflow(messageIDs: [1, 2]).placeholderRendering()
        #expect(inbox.onMessageSelected.send(1) == false, "a tap on a placeholder must not claim it was taken")
    }
}
