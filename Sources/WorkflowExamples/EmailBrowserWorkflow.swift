import Workflow

/// The seeds' split-screen email browser: an inbox on the left, the selected message on the right.
///
/// Owns the selection; the inbox reports selections as output and the browser feeds the
/// selected id to the message pane as props. `placement` lets a host move either pane to another
/// process without touching this code (see `ChildPlacement`).
public struct EmailBrowserWorkflow: Workflow, Codable, Equatable, Sendable {
    /// The mailbox's message ids.
    public var messageIDs: [MessageID]

    public init(messageIDs: [MessageID] = Array(1...5)) {
        self.messageIDs = messageIDs
    }

    public struct State: Codable, Equatable, Sendable {
        /// The selected message, if any.
        public var selection: MessageID?
    }

    public func makeInitialState() -> State { State(selection: nil) }

    public func render(state: State, context: RenderContext<EmailBrowserWorkflow>) -> SplitScreen {
        let inbox = InboxWorkflow(messageIDs: messageIDs)
            .rendered(in: context, key: "inbox", onOutput: { state, selected in
                state.selection = selected
                return nil
            })
        let message = MessageWorkflow(messageID: state.selection).rendered(in: context, key: "message")
        return SplitScreen(inbox: inbox, message: message)
    }
}

/// The browser's rendering: both panes side by side.
public struct SplitScreen: Codable, Sendable {
    public var inbox: InboxScreen
    public var message: MessageScreen
}
