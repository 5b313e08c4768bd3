/// Settings given on a daemon's command line, the highest-precedence layer.
///
/// Only what the operator typed is set; everything else is `nil` and falls through to the
/// environment, then to the configuration file.
public struct ClusterOverrides: Sendable, Equatable {
    /// `--log-level`.
    public var logLevel: String?
    /// `--log-format`.
    public var logFormat: String?
    /// `--endpoint` (the coordinator's endpoint).
    public var coordinatorEndpoint: String?
    /// `--root` (the coordinator's root workflow).
    public var root: String?
    /// `--name` (a worker's name).
    public var workerName: String?
    /// `--pool` (a worker's pool).
    public var workerPool: String?
    /// `--gateway-listen` (the coordinator's HTTP gateway: `host:port` or `off`).
    public var gatewayListen: String?
    /// `--drain-deadline-ms` (a worker's drain deadline in milliseconds; 0: no drain).
    public var drainDeadlineMilliseconds: String?
    /// `--store-kind` (the coordinator's store: `none`, `sqlite` or `postgres`).
    public var storeKind: String?
    /// `--store-path` (the coordinator's SQLite file).
    public var storePath: String?
    /// `--store-url` (the coordinator's PostgreSQL database).
    public var storeURL: String?
    /// `--gateway-header-timeout-ms` (`GatewayLimits.headerTimeout`, in milliseconds).
    public var gatewayHeaderTimeoutMilliseconds: String?
    /// `--gateway-body-timeout-ms` (`GatewayLimits.bodyTimeout`, in milliseconds).
    public var gatewayBodyTimeoutMilliseconds: String?
    /// `--gateway-idle-timeout-ms` (`GatewayLimits.idleTimeout`, in milliseconds).
    public var gatewayIdleTimeoutMilliseconds: String?
    /// `--gateway-max-connections` (`GatewayLimits.maxConnections`).
    public var gatewayMaxConnections: String?
    /// `store.lease_ms` (a standby setup).
    public var storeLeaseMilliseconds: String?

    /// Creates overrides; all absent unless given.
    public init(
        logLevel: String? = nil, logFormat: String? = nil, coordinatorEndpoint: String? = nil, root: String? = nil,
        workerName: String? = nil, workerPool: String? = nil, gatewayListen: String? = nil, drainDeadlineMilliseconds: String? = nil,
        storeKind: String? = nil, storePath: String? = nil, storeURL: String? = nil
    ) {
        self.storeURL = storeURL
        self.storeKind = storeKind
        self.storePath = storePath
        self.drainDeadlineMilliseconds = drainDeadlineMilliseconds
        self.gatewayListen = gatewayListen
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.coordinatorEndpoint = coordinatorEndpoint
        self.root = root
        self.workerName = workerName
        self.workerPool = workerPool
    }

    /// The overrides as command-line arguments in swift-configuration's key syntax
    /// (`log.level` is `--log-level`), for its `CommandLineArgumentsProvider`.
    var configurationArguments: [String] {
        let pairs: [(String, String?)] = [
            ("--log-level", logLevel), ("--log-format", logFormat), ("--coordinator-endpoint", coordinatorEndpoint),
            ("--coordinator-root", root), ("--worker-name", workerName), ("--worker-pool", workerPool),
            ("--gateway-listen", gatewayListen), ("--drain-deadline-ms", drainDeadlineMilliseconds),
            ("--store-kind", storeKind), ("--store-path", storePath), ("--store-url", storeURL),
            ("--gateway-header-timeout-ms", gatewayHeaderTimeoutMilliseconds), ("--gateway-body-timeout-ms", gatewayBodyTimeoutMilliseconds),
            ("--gateway-idle-timeout-ms", gatewayIdleTimeoutMilliseconds), ("--gateway-max-connections", gatewayMaxConnections),
            ("--store-lease-ms", storeLeaseMilliseconds),
        ]
        return ["daemon"] + pairs.flatMap { flag, value in value.map { [flag, $0] } ?? [] }
    }
}
