import Foundation
import WorkflowCluster
import WorkflowRemote

/// The rendering stream's messages, made once for every client: each settled rendering with the
/// statuses of the root's remote children at that moment (`RenderingMessage`).
///
/// One reader of the session's renderings reads its tree's child statuses (as the runtime's loop
/// published them, without a job on the loop) once per rendering it reads, and hands the message
/// to every WebSocket client through a buffer of one (a slow client skips
/// messages; so does the feed itself, when renderings come faster than it makes messages). A status
/// change a page must see comes with a rendering: a remote child that fails, recovers or starts
/// running makes its parent render again.
final class RenderingFeed: Sendable {
    private let messages = LatestValueBroadcast<[UInt8]>()

    /// Starts reading `session`'s renderings; the feed ends when the session stops.
    init(session: any ClusterRootSession, runtime: RemoteRuntime?, scope: TreeScope) {
        let messages = messages
        Task {
            for await rendering in session.renderings() {
                messages.publish(await Self.message(session: session, rendering: rendering, runtime: runtime, scope: scope))
            }
            messages.finish()
        }
    }

    /// The messages, the latest first.
    func subscribe() -> AsyncStream<[UInt8]> {
        messages.subscribe()
    }

    /// The message for `rendering`, with the statuses of the children of the tree `scope` names
    /// as the runtime has them now (a status change is published before the rendering that
    /// shows it, so it is never older than `rendering`).
    static func message(session: any ClusterRootSession, rendering: RootRenderingJSON, runtime: RemoteRuntime?, scope: TreeScope) async
        -> [UInt8]
    {
        let children = runtime.map { scope.childStatuses(in: $0) } ?? []
        return RenderingMessage.bytes(root: session.name, sequence: rendering.sequence, json: rendering.json, children: children)
    }
}
