/// A checkpoint with the token that fences its commit: the coordinator's as the store's writer,
/// or (sessions spread over coordinators) its session's lease's. Checkpoints committed together
/// (`CoordinatorStore.commit(_:)`) each carry their own.
package struct FencedCheckpoint: Sendable, Equatable {
    /// The checkpoint.
    package var checkpoint: CoordinatorCheckpoint
    /// The token its commit carries.
    package var token: FencingToken

    /// Creates a value.
    package init(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) {
        self.checkpoint = checkpoint
        self.token = token
    }
}
