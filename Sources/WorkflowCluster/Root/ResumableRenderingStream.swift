/// What a durable tree's rendering stream resumes from after its coordinator restarted, a
/// standby took it over or it was reactivated: the run its checkpoints carry (the same before
/// and after) and the rendering kept with the checkpoint it restored, from which the gateway
/// sends a resuming client only the changes (`CheckpointRendering`).
package struct ResumableStream: Sendable, Equatable {
    /// The tree's stream run.
    package var run: String
    /// The rendering of the checkpoint the tree restored (`nil`: it started fresh, or that
    /// checkpoint kept none).
    package var restored: RootRenderingJSON?

    /// Creates a value.
    package init(run: String, restored: RootRenderingJSON?) {
        self.run = run
        self.restored = restored
    }
}

/// A root session whose stream can resume across restarts: one with a store
/// (`WorkflowRootSession` with a `CheckpointCommitter`). A package protocol beside the public
/// `ClusterRootSession`, whose requirements applications could see.
package protocol ResumableRenderings: Sendable {
    /// The stream's run and restored rendering; `nil` without a store (its stream's run is new
    /// with each start of the tree).
    var resumableStream: ResumableStream? { get }
}
