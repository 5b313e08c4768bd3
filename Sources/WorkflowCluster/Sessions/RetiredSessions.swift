/// The sessions a coordinator ended at its stop without tearing their trees down
/// (`SessionDirectory.stopAll()`): their hosts, kept until `releaseInBackground()`.
///
/// Freeing a session's host tears its tree down, about 0.1 ms a session on the thread that
/// frees it: 100,000 sessions would hold a shutdown for longer than its bound. Their last
/// checkpoints are committed and their remote children stopped already, so nothing waits for
/// that teardown; the coordinator lets them go after its runtime has shut down, off the
/// shutdown's path, and the process may end before they are all freed.
package struct RetiredSessions: Sendable {
    /// The sessions' roots, each still holding its tree.
    package let sessions: [any ClusterRootSession]

    /// How many sessions are held.
    package var count: Int { sessions.count }

    /// Frees the sessions on a background task, after the caller lets go of this value.
    package consuming func releaseInBackground() {
        let sessions = self.sessions
        guard !sessions.isEmpty else { return }
        Task.detached(priority: .background) { withExtendedLifetime(sessions) {} }
    }
}
