import Testing
import Workflow
import EmailBrowser
import WorkflowTesting

/// The real rendering of `workflow` (children rendered for real, nothing started): the example
/// screens have no public initialisers, so tests obtain them by rendering the example workflows.
private func realRendering<W: Workflow>(of workflow: W) -> W.Rendering {
    var rendering: W.Rendering?
    workflow.renderTester().render { rendering = $0 }
    return rendering!
}

@Suite("RenderTester with the email browser")
struct EmailBrowserRenderTests {
    let browser = EmailBrowserWorkflow(messageIDs: [1, 2, 3])

    @Test("answers children with the expected renderings and applies the inbox's output")
    func inboxOutputChangesSelection() {
        let inbox = realRendering(of: InboxWorkflow(messageIDs: [1, 2, 3]))
        let message = realRendering(of: MessageWorkflow(messageID: 42))
        var expected = browser.makeInitialState()
        expected.selection = 3

        browser
            .renderTester()
            .expectWorkflow(type: InboxWorkflow.self, key: "inbox", producingRendering: inbox, producingOutput: 3) {
                #expect($0.messageIDs == [1, 2, 3])
            }
            .expectWorkflow(type: MessageWorkflow.self, key: "message", producingRendering: message) {
                #expect($0.messageID == nil)
            }
            .render { screen in
                // The canned renderings are what the parent composes, not freshly rendered panes.
                #expect(screen.message.messageID == 42)
                #expect(screen.inbox.messages.map(\.id) == [1, 2, 3])
            }
            .assert(state: expected)
            .assertNoOutput()
    }

    @Test("passes the selection down to the message pane as props")
    func selectionBecomesMessageProps() {
        var selected = browser.makeInitialState()
        selected.selection = 2
        var seenMessageID: MessageID?

        let result = browser
            .renderTester(initialState: selected)
            .expectWorkflow(type: InboxWorkflow.self, key: "inbox", producingRendering: realRendering(of: InboxWorkflow(messageIDs: [])))
            .expectWorkflow(type: MessageWorkflow.self, key: "message", producingRendering: realRendering(of: MessageWorkflow(messageID: 2))) {
                seenMessageID = $0.messageID
            }
            .render()
            .assertNoAction()

        #expect(seenMessageID == 2)
        #expect(result.state.selection == 2)
    }

    @Test("a sink in the rendering, sent from the assertions, applies its action after render")
    func sinkFromAssertionsIsApplied() {
        InboxWorkflow(messageIDs: [7, 8])
            .renderTester()
            .render { screen in
                #expect(screen.messages.map(\.id) == [7, 8])
                screen.onMessageSelected.send(8)
            }
            .assert(output: 8)
    }
}
