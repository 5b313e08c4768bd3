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

    /// A joined worker as the protocol sees it.
    struct Worker: Equatable {
        let name: String
        let pool: String
        /// The HELLO's instance: a HELLO under this name from another instance is another process.
        let instance: String
        let hostedTypes: Set<String>
        /// The state version it reads and writes, per hosted type (empty: version 1 for all).
        let stateVersions: [String: Int]
        var lastHeard: Instant
        var lastSent: Instant
        /// The children placed on it.
        var children: Set<UInt64> = []
        /// Set once it asked to drain: nothing new is placed on it, its children are moving.
        var isDraining = false
        /// Its children sent RELEASE and not yet answered with their final flush.
        var releasing: Set<UInt64> = []
        /// Of its released children: how many another worker could take at once, and how many wait.
        var drainMoved = 0
        var drainWaiting = 0

        init(name: String, pool: String, instance: String, hostedTypes: Set<String>, stateVersions: [String: Int] = [:], joinedAt now: Instant) {
            self.name = name
            self.pool = pool
            self.instance = instance
            self.hostedTypes = hostedTypes
            self.stateVersions = stateVersions
            lastHeard = now
            lastSent = now
        }

        /// It as the placement and rebalance rules see it.
        var placementCandidate: PlacementCandidate {
            PlacementCandidate(name: name, pool: pool, load: children.count, stateVersions: stateVersions)
        }

        /// Whether a child of `typeName` may be placed on it now (it hosts the type, is not leaving).
        func takes(_ typeName: String) -> Bool {
            hostedTypes.contains(typeName) && !isDraining
        }
    }

    let configuration: Configuration
    // State: changed only by the machine's own methods (its extensions are in other files).
    /// The joined workers, by connection.
    var workers: [WorkerID: Worker] = [:]
    /// Per remote child: the epoch and number of the last OUTPUTS message taken from its worker.
    var outputsMessageNumbers: [UInt64: (epoch: UInt64, number: UInt64)] = [:]
    /// Per remote child with events sent to its placement and not all acknowledged: since when
    /// its acknowledgements last moved on (or its first such event was sent).
    var awaitingAcknowledgement: [UInt64: Instant] = [:]
    /// The remote children whose proxies exist, by id (`ParentStateMachine+Placement.swift`).
    var children: [UInt64: Child] = [:]

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The workers a child of `typeName` may be placed on now, as the placement rules see them.
    func candidates(hosting typeName: String) -> [PlacementCandidate] {
        workers.values.filter { $0.takes(typeName) }.map(\.placementCandidate)
    }

    /// The connected worker `name` if it takes children of `typeName` now.
    func worker(named name: String, taking typeName: String) -> WorkerID? {
        workers.first { $0.value.name == name && $0.value.takes(typeName) }?.key
    }

    /// What the machine holds, for the simulator's bound on memory.
    var memory: Int { workers.count + outputsMessageNumbers.count + awaitingAcknowledgement.count + children.count }
}
