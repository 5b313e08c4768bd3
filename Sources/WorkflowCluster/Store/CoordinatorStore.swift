import Foundation

/// Where the coordinator keeps what it has accepted, so that nothing it answered "accepted" for
/// is lost when its process dies.
///
/// The unit of durability is a *checkpoint*: one tree's whole snapshot (the root's state and each
/// remote child's last acknowledged state with the events it has not acknowledged yet),
/// committed in one transaction. The store keeps the latest checkpoint of each tree it holds, by
/// its `CheckpointScope`: the coordinator's shared root, and each client's session (a session's
/// checkpoint also says what rebuilds its workflow: `SessionOrigin`), so a session survives
/// passivation and restarts as the shared root does. The coordinator commits one after the render pass that applied a
/// batch of accepted events and answers those events only then (group commit), so a restart from
/// the latest checkpoint has every answered event applied exactly once and nothing to replay.
///
/// Every write carries the writer's `FencingToken`. Opening the store as its writer
/// (`acquireWriter(holder:)`) takes a token higher than every earlier writer's, and the store
/// refuses a commit whose token is not the latest (`CoordinatorStoreError.fenced`): a deposed
/// coordinator that wakes up (SIGSTOP, a partition) cannot overwrite its successor's state. The
/// embedded SQLite store gives the token to whoever opens the file; a shared database adds a
/// lease with an expiry around the same token (the same interface).
package protocol CoordinatorStore: Sendable {
    /// Becomes the store's writer: returns a fencing token higher than every earlier writer's;
    /// from then on, commits with an older token are refused.
    func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken

    /// The latest checkpoint committed for `scope`, or `nil` if none was (or it was removed).
    func latestCheckpoint(of scope: CheckpointScope) async throws(CoordinatorStoreError) -> CoordinatorCheckpoint?

    /// Commits `checkpoint` as the latest of its scope, durably (it survives a crash of this
    /// process and of the machine once this returns), if `token` is still the latest writer's;
    /// throws `.fenced` otherwise, and stores nothing. A session's origin is stored with its first
    /// checkpoint and kept as it is by later ones.
    func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError)

    /// Commits checkpoints of different trees in one transaction (one fsync for all): each
    /// whose token is still its fence's is stored, each whose token is stale is refused
    /// (`.fenced`) without failing the others. Returns one outcome per checkpoint, in order; if
    /// the transaction itself fails, every outcome is that failure and nothing is stored. At most
    /// one checkpoint per scope. The stores' single `commit(_:fencedBy:)` goes through this, via
    /// `GroupCommit`, so concurrent commits of many trees share one transaction.
    func commit(_ checkpoints: [FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>]

    /// Every session the store holds a checkpoint of, without their snapshots: what a starting
    /// coordinator lists (passivated) until a client asks for one.
    func storedSessions() async throws(CoordinatorStoreError) -> [StoredSession]

    /// Removes `scope`'s checkpoint (a session that ended) if `token` is still the latest
    /// writer's; throws `.fenced` otherwise. Removing what is not there does nothing.
    func remove(_ scope: CheckpointScope, fencedBy token: FencingToken) async throws(CoordinatorStoreError)

    /// Releases the store's resources; the store is not used afterwards.
    func close() async
}

extension CoordinatorStore {
    /// One transaction per checkpoint, in order: for a store that cannot write several in one.
    package func commit(_ checkpoints: [FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] {
        var outcomes: [Result<Void, CoordinatorStoreError>] = []
        for fenced in checkpoints {
            do throws(CoordinatorStoreError) {
                try await commit(fenced.checkpoint, fencedBy: fenced.token)
                outcomes.append(.success(()))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }

    /// The shared root's latest checkpoint, or `nil` if none was ever committed.
    package func latestCheckpoint() async throws(CoordinatorStoreError) -> CoordinatorCheckpoint? {
        try await latestCheckpoint(of: .shared)
    }
}

/// Which tree a checkpoint is of: the coordinator's shared root, or one client's session.
///
/// The store keys checkpoints by it (`key`), so every tree a coordinator hosts is committed,
/// restored and removed by the same mechanism.
package enum CheckpointScope: Hashable, Sendable, CustomStringConvertible {
    /// The shared root (`coordinator.root`).
    case shared
    /// The session with this id.
    case session(SessionID)

    /// The key the store files it under: `shared`, or the session's id (32 hex digits, so the two
    /// never collide).
    package var key: String {
        switch self {
        case .shared: Self.sharedKey
        case .session(let id): id.text
        }
    }

    /// The scope `key` names, or `nil` if it names none.
    package init?(key: String) {
        if key == Self.sharedKey {
            self = .shared
        } else if let id = SessionID(key) {
            self = .session(id)
        } else {
            return nil
        }
    }

    /// The key, as logs show it (a session's only by its label: its id reaches its tree).
    package var description: String {
        switch self {
        case .shared: Self.sharedKey
        case .session(let id): "session \(id.text.prefix(8))"
        }
    }

    static let sharedKey = "shared"
}

/// What a session's workflow is built from again when its tree comes back from the store (after
/// a passivation or a restart): the registered root it was created of and its client's props.
package struct SessionOrigin: Sendable, Equatable {
    /// The root's registered name.
    package var root: String
    /// The JSON props its client sent (`nil`: none).
    package var props: Data?

    /// Creates a value.
    package init(root: String, props: Data?) {
        self.root = root
        self.props = props
    }
}

/// A session the store holds, as a starting coordinator lists it: no snapshot, no props (those
/// are read when a client asks for the session).
package struct StoredSession: Sendable, Equatable {
    /// Its id.
    package var id: SessionID
    /// The root it is of.
    package var root: String
    /// The sequence number of its latest committed rendering.
    package var renderingSequence: UInt64

    /// Creates a value.
    package init(id: SessionID, root: String, renderingSequence: UInt64) {
        self.id = id
        self.root = root
        self.renderingSequence = renderingSequence
    }
}

/// A number that rises with every new writer of a store; a write carrying an older one is
/// refused (Kleppmann's fencing token), so at most one writer's writes are ever accepted.
package struct FencingToken: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The token's value.
    package var rawValue: Int64

    /// Wraps a value.
    package init(rawValue: Int64) { self.rawValue = rawValue }

    /// Tokens order by value: a higher one is a later writer.
    package static func < (lhs: FencingToken, rhs: FencingToken) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The value, as logs show it.
    package var description: String { "\(rawValue)" }
}

/// One committed state of one of the coordinator's trees.
package struct CoordinatorCheckpoint: Sendable, Equatable {
    /// The tree it is of.
    package var scope: CheckpointScope
    /// What rebuilds a session's workflow (`nil` for the shared root, which the configuration
    /// names).
    package var origin: SessionOrigin?
    /// Rises by one with every commit of its scope (`1` for the first), so a reader can tell
    /// checkpoints apart.
    package var number: Int64
    /// The sequence number of the latest rendering this checkpoint reflects: a restarted
    /// coordinator numbers its renderings after it, so `sequence` never goes backwards for a
    /// client.
    package var renderingSequence: UInt64
    /// How many accepted events its scope's checkpoints made durable, over the store's lifetime
    /// (a count for operators and tests, not an identifier).
    package var acceptedEvents: Int64
    /// The root's tree snapshot (`TreeSnapshot.encoded()`).
    package var snapshot: Data

    /// Creates a checkpoint (of the shared root unless `scope` says otherwise).
    package init(
        scope: CheckpointScope = .shared, origin: SessionOrigin? = nil, number: Int64, renderingSequence: UInt64, acceptedEvents: Int64,
        snapshot: Data
    ) {
        self.scope = scope
        self.origin = origin
        self.number = number
        self.renderingSequence = renderingSequence
        self.acceptedEvents = acceptedEvents
        self.snapshot = snapshot
    }
}
