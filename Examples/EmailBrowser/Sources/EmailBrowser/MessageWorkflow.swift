import Workflow
import WorkflowRemote

/// Shows one message. Stateless, emits nothing: its props are the message id.
public struct MessageWorkflow: RemotableWorkflow, Equatable {
    /// The message to show, or `nil` for an empty pane.
    public var messageID: MessageID?

    public init(messageID: MessageID?) {
        self.messageID = messageID
    }

    public typealias State = Void

    public func render(state: Void, context: RenderContext<MessageWorkflow>) -> MessageScreen {
        guard let messageID else {
            return MessageScreen(messageID: nil, subject: "", body: "(no message selected)", renderedBy: ProcessLabel.current)
        }
        return MessageScreen(
            messageID: messageID, subject: MessageStore.subject(of: messageID), body: MessageStore.body(of: messageID),
            renderedBy: ProcessLabel.current)
    }

    public func placeholderRendering() -> MessageScreen {
        MessageScreen(messageID: messageID, subject: "", body: "(unavailable)", renderedBy: "(unavailable)")
    }
}

/// The message pane.
public struct MessageScreen: Codable, Sendable, Equatable {
    public var messageID: MessageID?
    public var subject: String
    public var body: String
    /// The process that rendered this pane.
    public var renderedBy: String
}
