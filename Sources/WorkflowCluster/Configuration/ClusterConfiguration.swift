import WorkflowRemote

/// Everything a cluster's daemons agree on, as read from one configuration file (with command-line
/// and environment overrides applied).
///
/// One file describes the whole cluster so that the coordinator and every worker start from the
/// same facts: where the coordinator listens, which workers exist, how liveness is judged and
/// where each remotable child runs. Moving a child to another process is an edit of this file
/// and a restart, never a code change.
public struct ClusterConfiguration: Sendable, Equatable {
    /// The coordinator's endpoint: it binds it, workers connect to it (`tcp://host:port`,
    /// `ipc://path`).
    public var coordinatorEndpoint: String
    /// Every coordinator's endpoint, when several share a store and one leads at a time
    /// (`coordinator.endpoints`; empty: only `coordinatorEndpoint`). Workers try them in turn,
    /// serving whichever leads (`workerParentEndpoints`); each coordinator binds its own
    /// (`coordinatorEndpoint`, set per process with `--endpoint`).
    public var coordinatorEndpoints: [String] = []
    /// The name of the root workflow the coordinator hosts (a key of `RootWorkflowRegistry`);
    /// empty: the registry's only root.
    public var root: String
    /// The workers the cluster is made of (what `scripts/cluster.sh` starts).
    public var workers: [WorkerEntry]
    /// How often an otherwise silent peer sends a heartbeat.
    public var heartbeatInterval: Duration
    /// How many silent heartbeat intervals make a peer dead.
    public var heartbeatLiveness: Int
    /// How long the coordinator waits for a worker's answer before reporting the child
    /// unavailable.
    public var requestDeadline: Duration
    /// Transport security.
    package var security: SecuritySettings
    /// How the daemons log.
    package var log: LogSettings
    /// Where the daemons export their spans (`tracing.*`; off by default).
    package var tracing = TracingSettings()
    /// Where `.configured` children run.
    package var placement: PlacementTable
    /// Where the coordinator writes the root's tree snapshot (`nil`: no snapshots), so a
    /// restarted coordinator can `--restore` it.
    public var snapshotFile: String?
    /// How often the snapshot is written (it is also written on SIGTERM); a coordinator crash
    /// loses at most this much state.
    public var snapshotInterval: Duration = .seconds(1)
    /// How long a starting coordinator lets a child placed in a pool wait for the pool's listed
    /// workers to join before placing it among those present (`coordinator.placement_grace_ms`;
    /// zero: place at once on whoever is there). A cold start or a restore then spreads the
    /// children over the pool, and hashed placement finds each child's own worker.
    public var placementGrace: Duration = .seconds(2)
    /// How the coordinator moves running children placed in pools to where their placement would
    /// put them now (`rebalance`: on by default, 4 moves at once, a spread of 2); `nil` when
    /// `rebalance.enabled` is false. Named placements never move.
    package var rebalancing: RebalancePolicy? = RebalancePolicy()
    /// The coordinator's HTTP gateway (off unless `gateway.listen` is set).
    package var gateway = GatewaySettings()
    /// Where the coordinator keeps what it accepts (none unless `store` is set).
    package var store = StoreSettings()
    /// How the coordinator hosts a tree per client (`nil`: no sessions, only the shared root).
    package var sessions: SessionSettings? = SessionSettings()
    /// How long a worker stopped with SIGTERM/SIGINT waits for its children to be handed over to
    /// other workers before it leaves anyway (`drain.deadline_ms`; zero: no drain, leave at once).
    /// The daemon's graceful-shutdown bound is this plus `ClusterDaemon.shutdownBound`.
    public var drainDeadline: Duration = .seconds(5)

    /// Creates a configuration; the defaults are those of a single-machine development cluster.
    package init(
        coordinatorEndpoint: String, root: String = "", workers: [WorkerEntry] = [],
        heartbeatInterval: Duration = .milliseconds(250), heartbeatLiveness: Int = 4,
        requestDeadline: Duration = .seconds(5), security: SecuritySettings = SecuritySettings(),
        log: LogSettings = LogSettings(), placement: PlacementTable = PlacementTable()
    ) {
        self.coordinatorEndpoint = coordinatorEndpoint
        self.root = root
        self.workers = workers
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLiveness = heartbeatLiveness
        self.requestDeadline = requestDeadline
        self.security = security
        self.log = log
        self.placement = placement
    }

    /// The transport security in force: the file's `security.mode`, else CURVE for a tcp
    /// endpoint (after command-line and environment overrides of the endpoint).
    package var securityMode: SecuritySettings.Mode {
        security.mode(for: coordinatorEndpoint)
    }

    /// The endpoints a worker connects to, one at a time, in this order: `coordinatorEndpoint`
    /// (the file's first, or the one the command line or environment names), then the rest of
    /// `coordinatorEndpoints`.
    package var workerParentEndpoints: [String] {
        [coordinatorEndpoint] + coordinatorEndpoints.filter { $0 != coordinatorEndpoint }
    }

    /// The entry for the worker called `name`, if the file lists it.
    package func worker(named name: String) -> WorkerEntry? {
        workers.first { $0.name == name }
    }
}
