import Metrics
import Tracing
import Workflow

/// How the coordinator runs, beyond the cluster configuration.
public struct CoordinatorOptions: Sendable {
    /// What to print on standard output.
    public var printMode: RenderingPrintMode
    /// The tree to start the root from (`--restore`), already read and validated.
    public var restoredSnapshot: TreeSnapshot?
    /// The store the coordinator keeps what it accepts in, opened with this process as its
    /// writer; the root resumes from its latest checkpoint (`nil`: no store, nothing durable).
    package var store: OpenedCoordinatorStore?
    /// The lease on a shared store (`store.lease_ms`): set, the coordinator starts as a
    /// standby, leads once it holds the lease, and its store comes from the lease (`store` is
    /// `nil` then).
    package var leadership: CoordinatorLeadership?
    /// Sessions spread over coordinators sharing a PostgreSQL store (`sessions.spread_lease_ms`):
    /// set, the sessions are committed to its store under their own leases, the shared root is
    /// this coordinator's own and kept in memory only, and `store` is `nil`.
    package var sessionSpread: SessionSpread?
    /// What serves while the coordinator is a standby (the gateway saying so).
    package var standbyCompanions: [any StandbyCompanion] = []
    /// What runs beside the root (a scripted demo, the stdin event reader, a gateway).
    public var companions: [any RootCompanion]
    /// Where the runtime and the root's host record metrics; `nil`: the process's bootstrapped
    /// `MetricsSystem` (a no-op unless the daemon bootstrapped one). Tests pass their own.
    package var metricsFactory: (any MetricsFactory)?
    /// Where the coordinator's spans go (`tracing.otlp_endpoint`, docs/OPERATIONS.md "Tracing");
    /// `nil`: tracing is off, and no span is made anywhere.
    package var tracer: (any Tracer)?

    /// Creates options.
    public init(printMode: RenderingPrintMode = .none, restoredSnapshot: TreeSnapshot? = nil, companions: [any RootCompanion] = []) {
        self.printMode = printMode
        self.restoredSnapshot = restoredSnapshot
        self.companions = companions
    }
}
