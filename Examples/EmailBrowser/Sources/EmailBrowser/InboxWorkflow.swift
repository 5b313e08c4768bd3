import Workflow
import WorkflowRemote

/// Lists messages and reports the one the user selects.
///
/// Stateless: the message ids are its props. Its rendering carries a sink, so selecting works
/// the same whether the inbox runs in the parent's process or on a worker.
public struct InboxWorkflow: RemotableWorkflow, Equatable {
    /// The ids to list, in order.
    public var messageIDs: [MessageID]

    public init(messageIDs: [MessageID]) {
        self.messageIDs = messageIDs
    }

    public typealias State = Void
    public typealias Output = MessageID

    public func render(state: Void, context: RenderContext<InboxWorkflow>) -> InboxScreen {
        InboxScreen(
            messages: messageIDs.map { InboxScreen.Row(id: $0, subject: MessageStore.subject(of: $0)) },
            onMessageSelected: context.makeOutputSink(),
            renderedBy: ProcessLabel.current)
    }

    public func placeholderRendering() -> InboxScreen {
        InboxScreen(messages: [], onMessageSelected: .inert, renderedBy: "(unavailable)")
    }
}

/// The inbox pane: one row per message and the handler to select one.
public struct InboxScreen: Codable, Sendable {
    /// One listed message.
    public struct Row: Codable, Sendable, Equatable {
        public var id: MessageID
        public var subject: String
    }

    public var messages: [Row]
    /// Selects a message: the inbox reports it to its parent.
    public var onMessageSelected: Sink<MessageID>
    /// The process that rendered this pane.
    public var renderedBy: String
}
