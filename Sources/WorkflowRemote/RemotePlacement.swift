/// Where a remote child runs.
///
/// Placement is data, not code: a parent can take it from configuration, and the same child code
/// runs locally when the placement says so.
public enum RemotePlacement: Sendable, Hashable, Codable {
    /// In the parent's process, as a plain local child.
    case local
    /// On any connected worker that hosts the child's type, the least loaded first.
    case anyWorker
    /// On the worker that announced this name.
    case worker(String)
    /// On a worker of this pool (workers announce their pool), the least loaded first.
    case pool(String)
}
