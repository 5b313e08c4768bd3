/// A hook into a host's life for logging, tracing and metrics.
///
/// Every method has an empty default, so an observer implements only what it needs. Callbacks run
/// on the host's loop, synchronously: keep them cheap. A host without observers skips the calls
/// entirely.
public protocol WorkflowObserver: Sendable {
    /// The host started with `root` (its stable type name).
    func sessionDidBegin(root: String)
    /// The host stopped; no callback follows.
    func sessionDidEnd()
    /// A workflow at `path` rendered (called once per node per pass).
    func workflowDidRender(path: String)
    /// An action of type `action` was applied to the workflow at `path`.
    func actionWasApplied(action: String, path: String, producedOutput: Bool)
    /// A snapshot could not be used to restore the workflow at `path`; it started fresh.
    func snapshotWasRejected(path: String, reason: String)
    /// A rendering was published, `duration` after its render pass began (including the passes
    /// and the waits for remote children it took to settle): the render time a user sees.
    func renderingWasPublished(after duration: Duration)
}

extension WorkflowObserver {
    public func sessionDidBegin(root: String) {}
    public func sessionDidEnd() {}
    public func workflowDidRender(path: String) {}
    public func actionWasApplied(action: String, path: String, producedOutput: Bool) {}
    public func snapshotWasRejected(path: String, reason: String) {}
    public func renderingWasPublished(after duration: Duration) {}
}
