/// Settings given on a daemon's command line, the highest-precedence layer.
///
/// Only what the operator typed is set; everything else is `nil` and falls through to the
/// environment, then to the configuration file.
package struct ClusterOverrides: Sendable, Equatable {
    /// `--log-level`.
    package var logLevel: String?
    /// `--log-format`.
    package var logFormat: String?
    /// `--endpoint` (the coordinator's endpoint).
    package var coordinatorEndpoint: String?
    /// `--root` (the coordinator's root workflow).
    package var root: String?
    /// `--name` (a worker's name).
    package var workerName: String?
    /// `--pool` (a worker's pool).
    package var workerPool: String?
    /// `--gateway-listen` (the coordinator's HTTP gateway: `host:port` or `off`).
    package var gatewayListen: String?
    /// `--drain-deadline-ms` (a worker's drain deadline in milliseconds; 0: no drain).
    package var drainDeadlineMilliseconds: String?
    /// `--store-kind` (the coordinator's store: `none`, `sqlite` or `postgres`).
    package var storeKind: String?
    /// `--store-path` (the coordinator's SQLite file).
    package var storePath: String?
    /// `--store-url` (the coordinator's PostgreSQL database).
    package var storeURL: String?
    /// `--store-sync` (when the SQLite store's commits reach the disk: `full` or `normal`).
    package var storeSync: String?
    /// `--gateway-header-timeout-ms` (`GatewayLimits.headerTimeout`, in milliseconds).
    package var gatewayHeaderTimeoutMilliseconds: String?
    /// `--gateway-body-timeout-ms` (`GatewayLimits.bodyTimeout`, in milliseconds).
    package var gatewayBodyTimeoutMilliseconds: String?
    /// `--gateway-idle-timeout-ms` (`GatewayLimits.idleTimeout`, in milliseconds).
    package var gatewayIdleTimeoutMilliseconds: String?
    /// `--gateway-max-connections` (`GatewayLimits.maxConnections`).
    package var gatewayMaxConnections: String?
    /// `--gateway-allowed-origins` (`GatewaySettings.allowedOrigins`, comma-separated).
    package var gatewayAllowedOrigins: String?
    /// `store.lease_ms` (a standby setup).
    package var storeLeaseMilliseconds: String?
    /// `--sessions-spread-lease-ms` (sessions spread over coordinators).
    package var sessionsSpreadLeaseMilliseconds: String?
    /// `--sessions-advertised-url` (this coordinator's gateway, as the others redirect to it).
    package var sessionsAdvertisedURL: String?

    /// Creates overrides; all absent unless given.
    package init(
        logLevel: String? = nil, logFormat: String? = nil, coordinatorEndpoint: String? = nil, root: String? = nil,
        workerName: String? = nil, workerPool: String? = nil, gatewayListen: String? = nil, drainDeadlineMilliseconds: String? = nil,
        storeKind: String? = nil, storePath: String? = nil, storeURL: String? = nil, storeSync: String? = nil
    ) {
        self.storeURL = storeURL
        self.storeSync = storeSync
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
            ("--store-kind", storeKind), ("--store-path", storePath), ("--store-url", storeURL), ("--store-sync", storeSync),
            ("--gateway-header-timeout-ms", gatewayHeaderTimeoutMilliseconds), ("--gateway-body-timeout-ms", gatewayBodyTimeoutMilliseconds),
            ("--gateway-idle-timeout-ms", gatewayIdleTimeoutMilliseconds), ("--gateway-max-connections", gatewayMaxConnections),
            ("--gateway-allowed-origins", gatewayAllowedOrigins),
            ("--store-lease-ms", storeLeaseMilliseconds), ("--sessions-spread-lease-ms", sessionsSpreadLeaseMilliseconds),
            ("--sessions-advertised-url", sessionsAdvertisedURL),
        ]
        return ["daemon"] + pairs.flatMap { flag, value in value.map { [flag, $0] } ?? [] }
    }
}
