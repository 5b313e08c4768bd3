/// The parent role's protocol logic about its workers, without I/O: who has joined, who is still
/// alive, which children each hosts, which are being handed over (a drain, a rebalance), and
/// whether a worker's OUTPUTS messages arrive without a gap.
///
/// It reads no clock and touches no socket: every input carries the time it happened at
/// (`at now:`) and every decision is returned (a worker to declare dead, a heartbeat to send, a
/// HELLO to answer or refuse, children to release, to move on or to fail when their worker
/// leaves). The parent role's driver (`ParentDriver.swift` and its extensions) feeds it from the
/// workers' socket and performs what it returns; the
/// deterministic simulator in the tests feeds the same code from a virtual clock and a seeded
/// scheduler.
///
/// The rules it owns:
/// - **Joining** (`admit(name:instance:from:probed:)`): one connection per worker name; another
///   process under a live worker's name is refused, the same process on a fresh connection
///   replaces its old one.
/// - **Liveness** (`livenessCheck(at:)`): a worker heard from by no message for the liveness window
///   is dead; a link left idle for an interval gets a heartbeat.
/// - **Handover** (`drainRequested(by:placedThere:)`, `releaseEnded(_:on:)`, `workerLeft(_:)`):
///   a child whose handover began moves on from its last acknowledged state whatever order its
///   final flush and its worker's departure arrive in: it is never failed.
/// - **Lost messages** (`outputsMessage(childID:epoch:number:)`): a gap in a placement's OUTPUTS
///   numbers means the connection lost messages in flight; so do events a live worker leaves
///   unacknowledged past the request deadline (`eventsSent(to:at:)`, `acknowledged(_:coversAllSent:at:)`):
///   the last messages lost either way have no later one to show the gap.
///
/// - **Each child** (`newPlacement(of:snapshotThrough:)`, `OutputOrder`): the epoch that fences
///   its placements, how far its events went to the current one, and which of its outputs were
///   delivered (a replay's duplicates dropped, a flush its worker's loss cut short delivered
///   again in full).
///
/// What a child's node snapshots (its props, last acknowledged state, unacknowledged events,
/// rendering) stays in its proxy, which that snapshot encodes.
struct ParentStateMachine {
    typealias Instant = ContinuousClock.Instant

    /// What the machine needs to know of the runtime's configuration.
    struct Configuration: Sendable {
        var heartbeatInterval: Duration
        var heartbeatLiveness: Int
        /// How long events sent to a live worker may wait for their acknowledgement before they
        /// count as lost in transit (the runtime's request deadline).
        var acknowledgementDeadline: Duration
        /// The protocol's checks (all on, but in the simulator's tests of them).
        var checks = ProtocolChecks()

        /// How long a worker may stay silent before it is declared dead.
        var liveness: Duration { heartbeatInterval * heartbeatLiveness }
    }

    let configuration: Configuration
    // State, one value per concept, each declared in its concept's file with its storage private
    // to it: only that type's methods (named for the protocol event) change it, nothing can assign
    // its fields. The machine's operations that span concepts (a placement, a drain, a departure)
    // call them from the extensions' files, which is why these are not `private(set)` (Swift's
    // `private` does not reach other files); the driver, the inspector and the tests only read.
    /// The joined workers, by connection (`ParentStateMachine+Workers.swift`).
    var workers = JoinedWorkers()
    /// Per remote child: the last OUTPUTS message taken from its worker (`ParentStateMachine+Events.swift`).
    var outputsMessageNumbers = OutputsMessageNumbers()
    /// Per remote child with events not all acknowledged: since when it waits (`ParentStateMachine+Events.swift`).
    var awaitingAcknowledgement = AcknowledgementWaits()
    /// The remote children whose proxies exist, by id (`ParentStateMachine+Lifecycle.swift`).
    var children = ChildRecords()

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The workers a child of `typeName` may be placed on now, as the placement rules see them.
    func candidates(hosting typeName: String) -> [PlacementCandidate] {
        workers.byConnection.values.filter { $0.takes(typeName) }.map(\.placementCandidate)
    }

    /// The connected worker `name` if it takes children of `typeName` now.
    func worker(named name: String, taking typeName: String) -> WorkerID? {
        workers.byConnection.first { $0.value.name == name && $0.value.takes(typeName) }?.key
    }

    /// What the machine holds, for the simulator's bound on memory.
    var memory: Int { workers.count + outputsMessageNumbers.count + awaitingAcknowledgement.count + children.count }
}
