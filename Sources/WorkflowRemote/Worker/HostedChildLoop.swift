import Workflow

/// The loop a worker's hosted child renders on: the runtime's own loop, together with where the
/// hosted child sits in the whole tree.
///
/// A remote grandchild's proxy (this child renders a remote child of its own) names the sinks it
/// forwards after its node: its path within this hosted child *and* this hosted child's path in
/// the root's tree, which stays the same when the child restarts in this process or moves to
/// another (see `SinkForwarder.prefix(scope:path:)`). Only this loop knows the second half, so
/// the hosted child's host runs on it rather than on the runtime directly; every call is the
/// runtime's.
final class HostedChildLoop: RuntimeLoop {
    let runtime: RemoteRuntime
    /// The hosted child's node path in its parent's tree (from its START).
    let scope: String

    init(runtime: RemoteRuntime, scope: String) {
        self.runtime = runtime
        self.scope = scope
    }

    func execute(_ job: @escaping @Sendable () -> Void) { runtime.execute(job) }

    var inLoop: Bool { runtime.inLoop }

    func settleRenderPass() -> Bool { runtime.settleRenderPass() }

    func runIfIdle(_ job: () -> Void) -> Bool { runtime.runIfIdle(job) }
}
