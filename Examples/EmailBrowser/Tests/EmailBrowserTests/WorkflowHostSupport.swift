import Synchronization
import Workflow
import WorkflowClusterTesting

/// Iterates `host.renderings` until a rendering satisfies `predicate` and returns it.
@discardableResult
func rendering<W>(of host: WorkflowHost<W>, where predicate: @escaping @Sendable (W.Rendering) -> Bool) async throws -> W.Rendering {
    try await withSafetyTimeout("waiting for a rendering of \(W.self)") {
        for await rendering in host.renderings where predicate(rendering) { return rendering }
        throw WaitFailure(description: "renderings of \(W.self) finished before the predicate held")
    }
}

/// Records the snapshots a host rejected on restore.
final class RejectedSnapshots: WorkflowObserver {
    private let rejected = Mutex<[String]>([])

    /// The paths whose snapshot was rejected, in order.
    var paths: [String] { rejected.withLock { $0 } }

    func snapshotWasRejected(path: String, reason: String) { rejected.withLock { $0.append(path) } }
}
