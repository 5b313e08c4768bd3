import Synchronization
import WorkflowCluster
import WorkflowRemote

/// The rendering feed of each session a client streams, kept while the session runs so that a
/// client reconnecting (a dropped connection, a reload) resumes from the frames it keeps.
///
/// A feed belongs to one run of its session: when the session stops (ended, passivated) its
/// renderings end, the feed ends and is dropped; a reactivated session gets a new one.
final class SessionFeeds: Sendable {
    private struct Entry {
        var session: ObjectIdentifier
        var feed: RenderingFeed
    }

    private let feeds = Mutex<[SessionID: Entry]>([:])
    private let runtime: RemoteRuntime?
    private let kept: Int

    init(runtime: RemoteRuntime?, kept: Int) {
        self.runtime = runtime
        self.kept = kept
    }

    /// The feed of `session` (the run of session `id` the directory holds now).
    func feed(of session: any ClusterRootSession, id: SessionID) -> RenderingFeed {
        let identity = ObjectIdentifier(session as AnyObject)
        return feeds.withLock { feeds in
            if let entry = feeds[id], entry.session == identity { return entry.feed }
            let feed = RenderingFeed(session: session, runtime: runtime, scope: .session(id), kept: kept) { [weak self] in
                self?.drop(id, of: identity)
            }
            feeds[id] = Entry(session: identity, feed: feed)
            return feed
        }
    }

    /// Forgets the feed of session `id` once its run `session` ended (not a newer run's).
    private func drop(_ id: SessionID, of session: ObjectIdentifier) {
        feeds.withLock { feeds in
            if feeds[id]?.session == session { feeds[id] = nil }
        }
    }
}
