import Workflow
import WorkflowRemote

/// The seeds' split-screen email browser: an inbox on the left, the selected message on the right.
///
/// Owns the selection; the inbox reports selections as output and the browser feeds the
/// selected id to the message pane as props. The placements move either pane to another process
/// without touching the panes' code; `.local` (the default) runs the whole tree in one process.
public struct EmailBrowserWorkflow: Workflow, Codable, Equatable, Sendable {
    /// The mailbox's message ids.
    public var messageIDs: [MessageID]
    /// Where the inbox pane runs.
    public var inboxPlacement: RemotePlacement
    /// Where the message pane runs.
    public var messagePlacement: RemotePlacement

    public init(
        messageIDs: [MessageID] = Array(1...5), inboxPlacement: RemotePlacement = .local,
        messagePlacement: RemotePlacement = .local
    ) {
        self.messageIDs = messageIDs
        self.inboxPlacement = inboxPlacement
        self.messagePlacement = messagePlacement
    }

    public struct State: Codable, Equatable, Sendable {
        /// The selected message, if any.
        public var selection: MessageID?
    }

    public func makeInitialState() -> State { State(selection: nil) }

    public func render(state: State, context: RenderContext<EmailBrowserWorkflow>) -> SplitScreen {
        let inbox = InboxWorkflow(messageIDs: messageIDs)
            .remote(on: inboxPlacement)
            .rendered(in: context, key: "inbox", onOutput: { state, selected in
                state.selection = selected
                return nil
            })
        let message = MessageWorkflow(messageID: state.selection)
            .remote(on: messagePlacement)
            .rendered(in: context, key: "message")
        return SplitScreen(inbox: inbox, message: message)
    }
}

/// The browser's rendering: both panes side by side.
public struct SplitScreen: Codable, Sendable {
    public var inbox: InboxScreen
    public var message: MessageScreen
}
