import Foundation
import Workflow
import WorkflowExamples
import WorkflowRemote

/// The `email-browser` root: the split email browser with both panes placed `.configured`.
struct EmailBrowserSession: ClusterRootSession {
    let host: WorkflowHost<EmailBrowserWorkflow>

    init(runtime: RemoteRuntime, snapshot: TreeSnapshot? = nil) {
        host = WorkflowHost(
            workflow: EmailBrowserWorkflow(inboxPlacement: .configured, messagePlacement: .configured), snapshot: snapshot, loop: runtime)
    }

    func snapshot() async -> TreeSnapshot {
        await host.snapshot()
    }

    func forEachFrame(_ body: (RenderedFrame) async -> Bool) async {
        for await screen in host.renderings {
            guard await body(Self.frame(of: screen)) else { return }
        }
    }

    func select(_ id: Int) -> Bool {
        let inbox = host.rendering.inbox
        guard inbox.messages.contains(where: { $0.id == id }) else { return false }
        inbox.onMessageSelected.send(id)
        return true
    }

    func stop() async {
        await host.stop()
    }

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

    static func frame(of screen: SplitScreen) -> RenderedFrame {
        let summary = Summary(
            inbox: .init(renderedBy: screen.inbox.renderedBy, messageIDs: screen.inbox.messages.map(\.id)),
            message: .init(renderedBy: screen.message.renderedBy, messageID: screen.message.messageID, subject: screen.message.subject))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(summary)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let placeholder = "(unavailable)"
        return RenderedFrame(
            text: text(of: screen), json: json,
            isComplete: screen.inbox.renderedBy != placeholder && screen.message.renderedBy != placeholder
                && !screen.inbox.messages.isEmpty,
            selection: screen.message.messageID)
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
