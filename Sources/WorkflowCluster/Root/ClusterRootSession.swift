import Foundation
import Workflow

/// A root workflow hosted by the coordinator, seen without its Swift types.
///
/// The coordinator chooses its root by name from configuration, so it cannot know the root's
/// rendering type. A session is the seam through which everything outside the tree reaches the
/// root: the latest settled rendering as JSON and a stream of them (sinks appear as token
/// strings), an event sent to such a token, the printed frames, the tree snapshot and the stop.
/// `WorkflowRootSession` is the implementation for any root whose rendering is `Encodable`.
public protocol ClusterRootSession: Sendable {
    /// The name the root is registered under (`coordinator.root`).
    var name: String { get }

    /// The latest settled rendering as JSON (sequence 0 and `null` while no rendering could be
    /// encoded yet).
    var latestRendering: RootRenderingJSON { get }

    /// Each settled rendering as JSON, starting with the latest. A slow reader skips
    /// renderings (the stream buffers only the newest) rather than queueing them; the stream ends
    /// when the session stops.
    func renderings() -> AsyncStream<RootRenderingJSON>

    /// Decodes `json` as the event type of the sink named `token` in the latest rendering and
    /// sends it to that sink, as a user of the rendering would. Returns once the event is
    /// accepted: queued on the root's runtime (its effect appears in a later rendering) and, when
    /// the coordinator has a store, recorded durably with the tree that applied it, so it takes
    /// effect exactly once whatever happens to the coordinator afterwards.
    func send(event json: Data, to token: String) async throws(RootEventError)

    /// Calls `body` with each settled rendering as a printable frame, in order, until `body`
    /// returns `false`, the session stops, or the task is cancelled.
    func forEachFrame(_ body: (RenderedFrame) async -> Bool) async

    /// The root host's tree snapshot (the root's state and each remote child's last
    /// acknowledged state), for `--snapshot-file`.
    func snapshot() async -> TreeSnapshot

    /// The root host's live tree in pre-order (the root first), for an inspector: local nodes
    /// and the proxies of remote children, by the paths the remote runtime also reports.
    func liveTree() async -> [WorkflowTreeNode]

    /// Stops the root's host (its remote children are stopped on their workers).
    func stop() async

    /// Ends the session at its process's exit without tearing its tree down: with a store its
    /// last checkpoint is committed, and its rendering streams end; the host keeps its tree until
    /// it is freed. For a coordinator ending many sessions at once, whose shutdown must not grow
    /// with each tree's teardown; the caller stops the remote children. By default, `stop()`.
    func stopAtExit() async
}

extension ClusterRootSession {
    /// Stops the session (`stop()`): a session without a cheaper end at exit ends as usual.
    public func stopAtExit() async {
        await stop()
    }
}
