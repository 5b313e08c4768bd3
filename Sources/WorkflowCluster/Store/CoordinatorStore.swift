import Foundation

/// Where the coordinator keeps what it has accepted, so that nothing it answered "accepted" for
/// is lost when its process dies.
///
/// The unit of durability is a *checkpoint*: the root's whole tree snapshot (the root's state and
/// each remote child's last acknowledged state with the events it has not acknowledged yet),
/// committed in one transaction. The coordinator commits one after the render pass that applied a
/// batch of accepted events and answers those events only then (group commit), so a restart from
/// the latest checkpoint has every answered event applied exactly once and nothing to replay.
///
/// Every write carries the writer's `FencingToken`. Opening the store as its writer
/// (`acquireWriter(holder:)`) takes a token higher than every earlier writer's, and the store
/// refuses a commit whose token is not the latest (`CoordinatorStoreError.fenced`): a deposed
/// coordinator that wakes up (SIGSTOP, a partition) cannot overwrite its successor's state. The
/// embedded SQLite store gives the token to whoever opens the file; a shared database adds a
/// lease with an expiry around the same token (the same interface).
public protocol CoordinatorStore: Sendable {
    /// Becomes the store's writer: returns a fencing token higher than every earlier writer's;
    /// from then on, commits with an older token are refused.
    func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken

    /// The latest committed checkpoint, or `nil` if none was ever committed.
    func latestCheckpoint() async throws(CoordinatorStoreError) -> CoordinatorCheckpoint?

    /// Commits `checkpoint` durably (it survives a crash of this process and of the machine once
    /// this returns) if `token` is still the latest writer's; throws `.fenced` otherwise, and
    /// stores nothing.
    func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError)

    /// Releases the store's resources; the store is not used afterwards.
    func close() async
}

/// A number that rises with every new writer of a store; a write carrying an older one is
/// refused (Kleppmann's fencing token), so at most one writer's writes are ever accepted.
public struct FencingToken: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The token's value.
    public var rawValue: Int64

    /// Wraps a value.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Tokens order by value: a higher one is a later writer.
    public static func < (lhs: FencingToken, rhs: FencingToken) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The value, as logs show it.
    public var description: String { "\(rawValue)" }
}

/// One committed state of the coordinator's tree.
public struct CoordinatorCheckpoint: Sendable, Equatable {
    /// Rises by one with every commit (`1` for the first), so a reader can tell checkpoints apart.
    public var number: Int64
    /// The sequence number of the latest rendering this checkpoint reflects: a restarted
    /// coordinator numbers its renderings after it, so `sequence` never goes backwards for a
    /// client.
    public var renderingSequence: UInt64
    /// How many accepted events this checkpoint made durable, over the store's lifetime (a
    /// count for operators and tests, not an identifier).
    public var acceptedEvents: Int64
    /// The root's tree snapshot (`TreeSnapshot.encoded()`).
    public var snapshot: Data

    /// Creates a checkpoint.
    public init(number: Int64, renderingSequence: UInt64, acceptedEvents: Int64, snapshot: Data) {
        self.number = number
        self.renderingSequence = renderingSequence
        self.acceptedEvents = acceptedEvents
        self.snapshot = snapshot
    }
}
