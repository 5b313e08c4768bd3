import Foundation
import WorkflowCluster
import EmailBrowser

/// How the email browser's screens are printed: a text screen naming the process that rendered
/// each pane, and a compact JSON summary (what the cluster tests and `cluster.sh status` read).
public enum EmailBrowserFrames {
    /// The label a placeholder pane shows (its child has no worker yet).
    static let placeholder = "(unavailable)"

    /// What a frame of the browser shows, also its JSON form.
    struct Summary: Encodable {
        struct Inbox: Encodable {
            var renderedBy: String
            var messageIDs: [Int]
        }
        struct Message: Encodable {
            var renderedBy: String
            var messageID: Int?
            var subject: String
        }
        var event = "rendering"
        var root = "email-browser"
        var inbox: Inbox
        var message: Message
    }

    /// The printed frame of `screen`.
    public static func frame(of screen: SplitScreen) -> RenderedFrame {
        let summary = Summary(
            inbox: .init(renderedBy: screen.inbox.renderedBy, messageIDs: screen.inbox.messages.map(\.id)),
            message: .init(renderedBy: screen.message.renderedBy, messageID: screen.message.messageID, subject: screen.message.subject))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(summary)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return RenderedFrame(text: text(of: screen), json: json)
    }

    /// Whether both panes were rendered by a real process (neither is a placeholder) and the
    /// inbox lists messages: the demo selects only on such a screen.
    static func isComplete(_ screen: SplitScreen) -> Bool {
        screen.inbox.renderedBy != placeholder && screen.message.renderedBy != placeholder && !screen.inbox.messages.isEmpty
    }

    static func text(of screen: SplitScreen) -> String {
        var lines = ["+-- inbox (rendered by \(screen.inbox.renderedBy))"]
        for row in screen.inbox.messages {
            let marker = row.id == screen.message.messageID ? ">" : " "
            lines.append("| \(marker) \(row.id)  \(row.subject)")
        }
        if screen.inbox.messages.isEmpty { lines.append("|   (no messages)") }
        lines.append("+-- message (rendered by \(screen.message.renderedBy))")
        if let id = screen.message.messageID { lines.append("|   #\(id) \(screen.message.subject)") }
        for line in screen.message.body.split(separator: "\n", omittingEmptySubsequences: false) {
            lines.append("|   \(line)")
        }
        lines.append("+--")
        return lines.joined(separator: "\n")
    }
}
