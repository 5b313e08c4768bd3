import Logging
import Metrics
import Tracing
import Workflow

/// How a `RemoteRuntime` takes part in a distributed tree.
///
/// A process can be a parent (it `listen`s; workers connect to it and host its remote children),
/// a worker (it `connect`s to a parent and hosts the children the parent places on it), or both
/// (a worker whose hosted children have remote children of their own).
public struct RemoteRuntimeConfiguration: Sendable {
    /// This process's name in logs and in HELLO (workers must have unique names).
    public var name: String
    /// The pool a worker announces (for `RemotePlacement.pool`).
    public var pool: String = "default"
    /// Where workers connect (`tcp://…`, `ipc://…`, `inproc://…`); `nil` when not a parent.
    public var listenEndpoint: String?
    /// The parent to serve as a worker; `nil` when not a worker.
    public var parentEndpoint: String?
    /// Other endpoints of the same parent, for a parent that runs as a leader with standbys
    /// (only the leader binds its endpoint). The worker talks to one at a time, starting with
    /// `parentEndpoint`; when that one is silent for the liveness window, or cannot be reached
    /// for as long, it moves to the next, in a circle.
    public var alternateParentEndpoints: [String] = []
    /// The types this process can host as a worker.
    public var registry: RemotableRegistry = RemotableRegistry()
    /// How workers connecting to `listenEndpoint` are authenticated.
    public var listenSecurity: ServerSecurity = .plaintext
    /// How this process authenticates to `parentEndpoint`.
    public var parentSecurity: ClientSecurity = .plaintext
    /// Allows plaintext on a tcp address other than loopback. Off by default: an unauthenticated
    /// cluster port on a network is refused at start unless this says it is wanted.
    public var allowPlaintextOnNetwork = false
    /// Where `.configured` children run.
    public var placementTable = PlacementTable()
    /// The workers the configuration lists in each pool, by name. Hashed placement ranks a
    /// child's candidates among these (rendezvous hashing), so which worker a child lands on
    /// depends on its path and this list, not on which worker happened to join first; and a
    /// start waits `placementGrace` for them. Empty: pools are whoever is connected.
    public var poolMembers: [String: [String]] = [:]
    /// How long after this runtime starts a child placed in a pool (`.pool`, `.hashed`) waits for
    /// the pool's members in `poolMembers` to join before it is placed among those present. A
    /// cold start or a restore then spreads its children over the pool instead of piling them
    /// onto the first worker to join; the child shows `starting` meanwhile (`reconnecting`, with its
    /// last rendering, after a restore). Zero: no waiting.
    public var placementGrace: Duration = .zero
    /// Whether, and how, running children placed in pools move to where their placement would put
    /// them now: a hashed child back to its owner when the owner returns, a least-loaded pool's
    /// children onto a worker that joins it (`RebalancePlan`). Each move is a planned handover,
    /// never `unavailable`. `nil` (the default): children stay where they were placed.
    public var rebalancing: RebalancePolicy?
    /// How many children a worker accepts; more are refused with an error.
    public var capacity: Int = 10_000
    /// How long a parent waits for a worker's answer before reporting the child unavailable.
    public var requestTimeout: Duration = .seconds(5)
    /// How often a peer that has sent nothing else sends a heartbeat.
    public var heartbeatInterval: Duration = .milliseconds(250)
    /// How many silent heartbeat intervals make a peer dead.
    public var heartbeatLiveness: Int = 4
    /// How many events a parent keeps for one remote child before its sinks refuse more
    /// (`send` returns `false`): the bound on replay memory while a worker is away.
    /// Kept below the sockets' 100,000-message send high-water mark, so a flood is refused at the
    /// sink before the socket's queue fills.
    public var maxOutstandingEvents: Int = 50_000
    /// The remote protocol versions this runtime speaks (`RemoteProtocol.supported`). A test may
    /// narrow or widen it to play a daemon of another build in a negotiation.
    package var protocolVersions: ClosedRange<Int> = RemoteProtocol.supported
    /// The protocol's checks for lost messages, all on. Only the simulator's tests switch one off,
    /// to show that it matters (`ProtocolChecks`).
    package var protocolChecks = ProtocolChecks()
    /// The most outputs one OUTPUTS message carries: a flush with more is split over several
    /// messages, all but the last marked `continues` (`PackedValues.maxOutputsPerMessage`). The
    /// simulator lowers it, so flushes split often and the parent's reassembly meets every fault.
    var maxOutputsPerMessage: Int = PackedValues.maxOutputsPerMessage
    /// The largest message accepted from a peer, in bytes (`ZMQ_MAXMSGSIZE`).
    public var maxMessageSize: Int = 16 << 20
    /// Where the runtime logs (one line per event, with the node path and peer as metadata).
    public var logger: Logger
    /// Where the runtime's metrics go (`RemoteRuntimeMetrics` lists them); `nil`: the process's
    /// bootstrapped `MetricsSystem` (a no-op unless the daemon bootstrapped one). Tests pass a
    /// factory over a registry of their own, so parallel tests never share global state.
    public var metricsFactory: (any MetricsFactory)?
    /// Observers given to the host of every child this runtime hosts for a parent (a worker's
    /// render and action metrics, e.g. `WorkflowMetricsObserver`). Empty by default: an
    /// observer is called on every render and action of every hosted node.
    public var hostedChildObservers: [any WorkflowObserver] = []
    /// Where the runtime's spans go (docs/OPERATIONS.md, "Tracing"): sending an event to a
    /// worker, a worker applying it, rendering and flushing back, the parent applying the flush.
    /// `nil` (the default): tracing is off and the runtime does no tracing work at all. Passed
    /// here rather than bootstrapped globally, so two runtimes in one process (tests) never share it.
    public var tracer: (any Tracer)?

    public init(name: String, logger: Logger? = nil) {
        self.name = name
        self.logger = logger ?? Logger(label: "workflow.remote.\(name)")
    }
}
