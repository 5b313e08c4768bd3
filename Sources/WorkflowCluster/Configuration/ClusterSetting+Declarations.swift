import Logging

/// Every setting of the cluster's daemons, each declared once (see `ClusterSetting`).
///
/// The order is the docs' table order and the order values are applied in: a section's
/// `enabled` comes after the settings it turns off.
extension ClusterSetting {
    package static let coordinatorEndpoint = ClusterSetting(
        "coordinator.endpoint", flag: "--endpoint", environment: "WORKFLOW_COORDINATOR_ENDPOINT", kind: .endpoint,
        default: "the first of coordinator.endpoints", reader: .both,
        help: "The coordinator's endpoint (tcp://HOST:PORT or ipc://PATH): the coordinator binds it, workers connect to it. The file needs it unless it has coordinator.endpoints."
    ) { $0.configuration.coordinatorEndpoint = $1.text }

    package static let coordinatorEndpoints = ClusterSetting(
        "coordinator.endpoints", kind: .endpoints, default: "", reader: .both,
        help: "Every coordinator's endpoint, for a leader with standbys: workers try them in turn and serve whichever leads; each coordinator binds its own (--endpoint; default the first)."
    ) { $0.configuration.coordinatorEndpoints = $1.list }

    package static let coordinatorRoot = ClusterSetting(
        "coordinator.root", flag: "--root", environment: "WORKFLOW_COORDINATOR_ROOT", kind: .text(nonEmpty: false),
        default: "the only registered root", reader: .coordinator, valueName: "name",
        help: "The root workflow to host, by its registered name; may be omitted when the coordinator registers a single root."
    ) { $0.configuration.root = $1.text }

    package static let placementGrace = ClusterSetting(
        "coordinator.placement_grace_ms", kind: .milliseconds(atLeast: 0), default: "2000", reader: .coordinator,
        help: "How long a starting coordinator lets a child placed in a pool wait for the pool's listed workers to join before placing it among those present (0: at once). Rebalancing begins when it is over."
    ) { $0.configuration.placementGrace = $1.milliseconds }

    package static let workers = ClusterSetting(
        "workers", kind: .structured("an array of worker objects"), default: "none", reader: .both,
        help: "The cluster's workers, each {\"name\", \"pool\" (default \"default\"), \"capacity\" (default 10000: the most children it hosts)}: what cluster.sh starts, what placement may name."
    ) { _, _ in }

    package static let workerName = ClusterSetting(
        "worker.name", inFile: false, flag: "--name", environment: "WORKFLOW_WORKER_NAME", kind: .text(nonEmpty: true), default: "",
        reader: .worker, valueName: "name",
        help: "This worker's name, unique in the cluster; its pool and capacity come from the file's workers entry of that name."
    ) { $0.workerName = $1.text }

    package static let workerPool = ClusterSetting(
        "worker.pool", inFile: false, flag: "--pool", environment: "WORKFLOW_WORKER_POOL", kind: .text(nonEmpty: true),
        default: "the workers entry's", reader: .worker, valueName: "pool", help: "The pool this worker announces, instead of its workers entry's."
    ) { $0.workerPool = $1.text }

    package static let workerAdminListen = ClusterSetting(
        "worker.admin_listen", inFile: false, flag: "--admin-listen", environment: "WORKFLOW_WORKER_ADMIN_LISTEN", kind: .address, default: "off",
        reader: .worker, help: "Serve this worker's metrics (GET /metrics) and liveness (GET /health/live) at host:port."
    ) { $0.workerAdminListen = $1.address }

    package static let heartbeatInterval = ClusterSetting(
        "heartbeat.interval_ms", kind: .milliseconds(atLeast: 1), default: "250", reader: .both,
        help: "How often an otherwise silent peer sends a heartbeat; a peer silent for interval × liveness is dead and its children become unavailable."
    ) { $0.configuration.heartbeatInterval = $1.milliseconds }

    package static let heartbeatLiveness = ClusterSetting(
        "heartbeat.liveness", kind: .count(atLeast: 1), default: "4", reader: .both,
        help: "How many silent heartbeat intervals make a peer dead."
    ) { $0.configuration.heartbeatLiveness = $1.integer }

    package static let requestDeadline = ClusterSetting(
        "request.deadline_ms", kind: .milliseconds(atLeast: 1), default: "5000", reader: .coordinator,
        help: "How long the coordinator waits for a worker's answer before reporting the child unavailable."
    ) { $0.configuration.requestDeadline = $1.milliseconds }

    package static let drainDeadline = ClusterSetting(
        "drain.deadline_ms", flag: "--drain-deadline-ms", environment: "WORKFLOW_DRAIN_DEADLINE_MS", kind: .milliseconds(atLeast: 0),
        default: "5000", reader: .worker,
        help: "How long SIGTERM/SIGINT waits for this worker's children to be handed over to other workers before it leaves anyway (0: leave at once)."
    ) { $0.configuration.drainDeadline = $1.milliseconds }

    package static let rebalanceMovesAtOnce = ClusterSetting(
        "rebalance.moves_at_once", kind: .count(atLeast: 1), default: "4", reader: .coordinator,
        rules: [.needs("rebalance.enabled", ["true"], because: "rebalancing is off")],
        help: "The most children rebalancing moves at a time, each by the drain's planned handover (latest state, events held and delivered)."
    ) { $0.configuration.rebalancing?.movesAtOnce = $1.integer }

    package static let rebalanceSpread = ClusterSetting(
        "rebalance.spread", kind: .count(atLeast: 2), default: "2", reader: .coordinator,
        rules: [.needs("rebalance.enabled", ["true"], because: "rebalancing is off")],
        help: "How far apart a least-loaded pool's most and least loaded workers may be before children move onto the least loaded (a hashed child moves back to its owner whenever it returns)."
    ) { $0.configuration.rebalancing?.spread = $1.integer }

    package static let rebalanceEnabled = ClusterSetting(
        "rebalance.enabled", kind: .boolean, default: "true", reader: .coordinator,
        help: "Whether children placed in pools move, while the tree runs, to where their placement would put them now. Named placements never move."
    ) { if !$1.boolean { $0.configuration.rebalancing = nil } }

    package static let securityMode = ClusterSetting(
        "security.mode", kind: .choice(SecuritySettings.Mode.allCases.map(\.rawValue)), default: "curve for tcp://, plaintext for ipc://",
        reader: .both, help: "Transport security: curve (encrypted; only allow-listed workers join) or plaintext."
    ) { $0.configuration.security.mode = SecuritySettings.Mode(rawValue: $1.text) }

    package static let keysDirectory = ClusterSetting(
        "security.keys_dir", kind: .path, default: "keys, beside the file", reader: .both,
        help: "Where keygen --config writes the keys, and where every key path below defaults to (KEYS)."
    ) { $0.configuration.security.keysDirectory = $1.text }

    package static let serverSecretKey = ClusterSetting(
        "security.server_secret_key", kind: .path, default: "KEYS/coordinator.key", reader: .coordinator,
        help: "CURVE, coordinator: its secret key file (mode 0600)."
    ) { $0.configuration.security.serverSecretKeyPath = $1.text }

    package static let allowedClientKeys = ClusterSetting(
        "security.allowed_client_keys", kind: .path, default: "KEYS/allowed-workers", reader: .coordinator,
        help: "CURVE, coordinator: the allow-list, one worker public key per line."
    ) { $0.configuration.security.allowedClientKeysPath = $1.text }

    package static let serverPublicKey = ClusterSetting(
        "security.server_public_key", kind: .path, default: "KEYS/coordinator.pub", reader: .worker,
        help: "CURVE, workers: the coordinator's public key file."
    ) { $0.configuration.security.serverPublicKeyPath = $1.text }

    package static let clientKeysDirectory = ClusterSetting(
        "security.client_keys_dir", kind: .path, default: "KEYS/workers", reader: .worker,
        help: "CURVE, workers: a directory holding each worker's secret key as <worker-name>.key (mode 0600)."
    ) { $0.configuration.security.clientKeysDirectory = $1.text }

    package static let clientSecretKey = ClusterSetting(
        "security.client_secret_key", kind: .path, default: "none", reader: .worker,
        help: "CURVE, workers: one worker's secret key file, instead of security.client_keys_dir (a machine that runs a single worker)."
    ) { $0.configuration.security.clientSecretKeyPath = $1.text }

    package static let allowPlaintextOnNetwork = ClusterSetting(
        "security.allow_plaintext_on_network", kind: .boolean, default: "false", reader: .both,
        help: "Whether plaintext may be used on a non-loopback tcp address (false: refused at start)."
    ) { $0.configuration.security.allowPlaintextOnNetwork = $1.boolean }

    package static let storeKind = ClusterSetting(
        "store.kind", flag: "--store-kind", environment: "WORKFLOW_STORE_KIND", kind: .choice(StoreSettings.Kind.allCases.map(\.rawValue)),
        default: "none", reader: .coordinator,
        rules: [
            .needsGiven("store.path", when: ["sqlite"], because: "the SQLite store is that file"),
            .needsGiven("store.url", when: ["postgres"], because: "the PostgreSQL store is that database"),
        ],
        valueName: "kind",
        help: "Where the coordinator keeps every accepted event before answering it: none (nothing accepted is durable), sqlite (the file at store.path) or postgres (the database at store.url)."
    ) { $0.configuration.store.kind = StoreSettings.Kind(rawValue: $1.text) ?? .none }

    package static let storePath = ClusterSetting(
        "store.path", flag: "--store-path", environment: "WORKFLOW_STORE_PATH", kind: .path, default: "none", reader: .coordinator,
        rules: [.needs("store.kind", ["sqlite"], because: "a path alone starts no store")],
        help: "The SQLite store's file (created if missing, its directory must exist; beside the file when relative in it); with store.kind sqlite."
    ) { $0.configuration.store.path = $1.text }

    package static let storeURL = ClusterSetting(
        "store.url", flag: "--store-url", environment: "WORKFLOW_STORE_URL",
        kind: .url("a PostgreSQL URL"), default: "none", reader: .coordinator,
        rules: [.needs("store.kind", ["postgres"], because: "a URL alone starts no store")], isSecret: true,
        help: "The PostgreSQL store's database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or postgres://USER@/DATABASE?host=SOCKET_DIR&port=PORT; optional connect_timeout and operation_timeout (seconds), sslmode (disable, the default, require, verify-ca or verify-full) and sslrootcert (a CA file, with verify-ca or verify-full); with store.kind postgres."
    ) { $0.configuration.store.url = $1.text }

    package static let storeSync = ClusterSetting(
        "store.sync", flag: "--store-sync", environment: "WORKFLOW_STORE_SYNC", kind: .choice(StoreSettings.Sync.allCases.map(\.rawValue)),
        default: "full", reader: .coordinator,
        rules: [.needs("store.kind", ["sqlite"], when: ["normal"], because: "PostgreSQL's durability is the server's synchronous_commit")],
        help: "When the SQLite store's commits reach the disk: full (fsynced before an event is answered: survives a machine crash) or normal (fsynced later: survives a coordinator crash, SIGKILL included, not a machine crash)."
    ) { $0.configuration.store.sync = StoreSettings.Sync(rawValue: $1.text) ?? .full }

    package static let storeMaxCommitBatch = ClusterSetting(
        "store.max_commit_batch", environment: "WORKFLOW_STORE_MAX_COMMIT_BATCH", kind: .count(atLeast: 1),
        default: "\(StoreSettings.defaultMaxCommitBatch)", reader: .coordinator,
        rules: [.needs("store.kind", ["sqlite", "postgres"], because: "it sizes the store's transactions")],
        help: "The most trees' checkpoints (the shared root's, sessions') one store transaction commits together; 1 commits each tree alone."
    ) { $0.configuration.store.maxCommitBatch = $1.integer }

    package static let storeLease = ClusterSetting(
        "store.lease_ms", flag: "--store-lease-ms", environment: "WORKFLOW_STORE_LEASE_MS",
        kind: .milliseconds(atLeast: StoreSettings.shortestLeaseMilliseconds), default: "none", reader: .coordinator,
        rules: [.needs("store.kind", ["postgres"], because: "only a shared database has standbys")],
        help: "Share the PostgreSQL store with standby coordinators under a lease of this many milliseconds (2000 recommended): start as a standby, lead while holding the lease, exit 75 when it cannot be renewed."
    ) { $0.configuration.store.lease = $1.milliseconds }

    package static let sessionsIdleTimeout = ClusterSetting(
        "sessions.idle_timeout_ms", kind: .milliseconds(atLeast: 1), default: "300000", reader: .coordinator,
        rules: [.needs("sessions.enabled", ["true"], because: "sessions are off")],
        help: "How long a session no client uses stays active before it is passivated (its tree kept, its memory freed)."
    ) { $0.configuration.sessions?.idleTimeout = $1.milliseconds }

    package static let sessionsMax = ClusterSetting(
        "sessions.max_sessions", kind: .count(atLeast: 1), default: "10000", reader: .coordinator,
        rules: [.needs("sessions.enabled", ["true"], because: "sessions are off")],
        help: "The most sessions (active and passivated) at once; one more is refused (503 too-many-sessions)."
    ) { $0.configuration.sessions?.maxSessions = $1.integer }

    package static let sessionsMaxCreationsPerSecond = ClusterSetting(
        "sessions.max_creations_per_second", kind: .count(atLeast: 1), default: "100", reader: .coordinator,
        rules: [.needs("sessions.enabled", ["true"], because: "sessions are off")],
        help: "The most sessions created per second (429 too-many-creations beyond)."
    ) { $0.configuration.sessions?.maxCreationsPerSecond = Double($1.integer) }

    package static let sessionsSpreadLease = ClusterSetting(
        "sessions.spread_lease_ms", flag: "--sessions-spread-lease-ms", environment: "WORKFLOW_SESSIONS_SPREAD_LEASE_MS",
        kind: .milliseconds(atLeast: StoreSettings.shortestLeaseMilliseconds), default: "none", reader: .coordinator,
        rules: [
            .needs("sessions.enabled", ["true"], because: "spread sessions are sessions"),
            .needs(
                "store.kind", ["postgres"], because: "spread sessions are shared through one PostgreSQL database (an SQLite file is one machine's)",
                coordinatorOnly: true),
            .excludes(
                "store.lease_ms", because: "spread coordinators all serve at once (each hosts a shared root of its own), none is a standby",
                coordinatorOnly: true),
            .needsGiven("gateway.listen", because: "spread sessions are reached through the gateways", coordinatorOnly: true),
            .needsGiven("sessions.advertised_url", because: "the other coordinators redirect this one's sessions' clients there", coordinatorOnly: true),
        ],
        help: "Spread sessions over the coordinators sharing the PostgreSQL store, each session owned by one at a time under a lease of this many milliseconds (1500 recommended)."
    ) { settings, value in
        let advertisedURL = settings.configuration.sessions?.spread?.advertisedURL ?? ""
        settings.configuration.sessions?.spread = SessionSpreadSettings(lease: value.milliseconds, advertisedURL: advertisedURL)
    }

    package static let sessionsAdvertisedURL = ClusterSetting(
        "sessions.advertised_url", flag: "--sessions-advertised-url", environment: "WORKFLOW_SESSIONS_ADVERTISED_URL",
        kind: .url(
            "this coordinator's gateway as clients reach it, http://HOST:PORT (or https), with a path if a reverse proxy prefixes it, http://HOST/PREFIX"),
        default: "none", reader: .coordinator,
        rules: [.needsGiven("sessions.spread_lease_ms", because: "only spread sessions are redirected to another coordinator")],
        help: "This coordinator's gateway as clients reach it (http://HOST:PORT, with a reverse proxy's path prefix if any): where the other coordinators redirect requests for the sessions it owns."
    ) { $0.configuration.sessions?.spread?.advertisedURL = $1.text }

    package static let sessionsEnabled = ClusterSetting(
        "sessions.enabled", kind: .boolean, default: "true", reader: .coordinator,
        help: "Whether the coordinator hosts a tree per client (a session) beside the shared root."
    ) { if !$1.boolean { $0.configuration.sessions = nil } }

    package static let snapshotFile = ClusterSetting(
        "snapshot.file", flag: "--snapshot-file", kind: .workingDirectoryPath, default: "none", reader: .coordinator,
        help: "Write the root's tree snapshot to this file (atomically; relative to the working directory) every snapshot.interval_ms and on SIGTERM, for --restore."
    ) { $0.configuration.snapshotFile = $1.text }

    package static let snapshotInterval = ClusterSetting(
        "snapshot.interval_ms", flag: "--snapshot-interval-ms", kind: .milliseconds(atLeast: 1), default: "1000", reader: .coordinator,
        rules: [.needsGiven("snapshot.file", because: "no file, no snapshots")],
        help: "How often the snapshot is written; a coordinator crash loses at most this much without a store."
    ) { $0.configuration.snapshotInterval = $1.milliseconds }

    package static let logLevel = ClusterSetting(
        "log.level", flag: "--log-level", environment: "WORKFLOW_LOG_LEVEL", kind: .choice(Logger.Level.allCases.map(\.rawValue)),
        default: "info", reader: .both, valueName: "level", help: "The lowest log level written."
    ) { $0.configuration.log.level = Logger.Level(rawValue: $1.text) ?? .info }

    package static let logFormat = ClusterSetting(
        "log.format", flag: "--log-format", environment: "WORKFLOW_LOG_FORMAT", kind: .choice(LogSettings.Format.allCases.map(\.rawValue)),
        default: "text", reader: .both, valueName: "format", help: "The log line format: text, or json for log shippers."
    ) { $0.configuration.log.format = LogSettings.Format(rawValue: $1.text) ?? .text }

    package static let gatewayListen = ClusterSetting(
        "gateway.listen", flag: "--gateway-listen", environment: "WORKFLOW_GATEWAY_LISTEN", kind: .address, default: "off", reader: .coordinator,
        help: "Serve the HTTP gateway (renderings, events, inspector, metrics, health) at host:port ([::1]:port for IPv6, port 0 for any free one), or off."
    ) { $0.configuration.gateway.listen = $1.address }

    package static let gatewayBearerTokenFile = ClusterSetting(
        "gateway.bearer_token_file", kind: .path, default: "none", reader: .coordinator,
        help: "The file holding the token API requests must carry (mode 0600, at least 16 characters on its first line); required when gateway.listen is not a loopback address."
    ) { $0.configuration.gateway.bearerTokenFile = $1.text }

    package static let gatewayHeaderTimeout = ClusterSetting(
        "gateway.header_timeout_ms", flag: "--gateway-header-timeout-ms", environment: "WORKFLOW_GATEWAY_HEADER_TIMEOUT_MS",
        kind: .milliseconds(atLeast: 1), default: "10000", reader: .coordinator,
        help: "The longest a request head may take to arrive (408 and closed after)."
    ) { $0.configuration.gateway.limits.headerTimeout = $1.milliseconds }

    package static let gatewayBodyTimeout = ClusterSetting(
        "gateway.body_timeout_ms", flag: "--gateway-body-timeout-ms", environment: "WORKFLOW_GATEWAY_BODY_TIMEOUT_MS",
        kind: .milliseconds(atLeast: 1), default: "30000", reader: .coordinator,
        help: "The longest a request body may take to arrive, from its head."
    ) { $0.configuration.gateway.limits.bodyTimeout = $1.milliseconds }

    package static let gatewayIdleTimeout = ClusterSetting(
        "gateway.idle_timeout_ms", flag: "--gateway-idle-timeout-ms", environment: "WORKFLOW_GATEWAY_IDLE_TIMEOUT_MS",
        kind: .milliseconds(atLeast: 1), default: "60000", reader: .coordinator, help: "How long a connection may wait for its next request."
    ) { $0.configuration.gateway.limits.idleTimeout = $1.milliseconds }

    package static let gatewayMaxConnections = ClusterSetting(
        "gateway.max_connections", flag: "--gateway-max-connections", environment: "WORKFLOW_GATEWAY_MAX_CONNECTIONS",
        kind: .count(atLeast: 1), default: "512", reader: .coordinator, help: "The most client connections open at once (one more: 503)."
    ) { $0.configuration.gateway.limits.maxConnections = $1.integer }

    package static let gatewayAllowedOrigins = ClusterSetting(
        "gateway.allowed_origins", flag: "--gateway-allowed-origins", environment: "WORKFLOW_GATEWAY_ALLOWED_ORIGINS", kind: .origins,
        default: "none", reader: .coordinator,
        help: "Pages' origins (http(s)://HOST[:PORT], no path, no *) that may call this gateway across origins (CORS); comma-separated on the command line."
    ) {
        if case .origins(let origins) = $1 { $0.configuration.gateway.allowedOrigins = origins }
    }

    package static let gatewayStreamWindow = ClusterSetting(
        "gateway.stream_window", flag: "--gateway-stream-window", environment: "WORKFLOW_GATEWAY_STREAM_WINDOW", kind: .count(atLeast: 1),
        default: "16", reader: .coordinator,
        help: "The most rendering-stream messages a client asking for deltas may leave unacknowledged (then it gets nothing until it acknowledges, and then one message to the latest); also how many recent frames each stream keeps for a client resuming with a delta."
    ) { $0.configuration.gateway.stream.window = $1.integer }

    package static let gatewayStreamTick = ClusterSetting(
        "gateway.stream_tick_ms", flag: "--gateway-stream-tick-ms", environment: "WORKFLOW_GATEWAY_STREAM_TICK_MS",
        kind: .milliseconds(atLeast: 0), default: "16", reader: .coordinator,
        help: "The shortest time between two rendering-stream messages to one client: faster renderings reach it as one message to the latest (0: no pause)."
    ) { $0.configuration.gateway.stream.tick = $1.milliseconds }

    package static let tracingOTLPEndpoint = ClusterSetting(
        "tracing.otlp_endpoint", flag: "--tracing-otlp-endpoint", environment: "WORKFLOW_TRACING_OTLP_ENDPOINT",
        kind: .url("an http:// or https:// URL of an OTLP/HTTP collector, e.g. http://127.0.0.1:4318"), default: "off", reader: .both,
        valueName: "url",
        help: "Export this daemon's spans (one trace per event: the gateway's request, the commit, the worker's apply, render and flush, the push) over OTLP/HTTP to this collector; /v1/traces is appended to a URL without a path. Off: no span is made."
    ) { $0.configuration.tracing.otlpEndpoint = $1.text }

    package static let tracingOTLPProtocol = ClusterSetting(
        "tracing.otlp_protocol", flag: "--tracing-otlp-protocol", environment: "WORKFLOW_TRACING_OTLP_PROTOCOL",
        kind: .choice(TracingSettings.OTLPProtocol.allCases.map(\.rawValue)), default: "http/protobuf", reader: .both,
        rules: [.needsGiven("tracing.otlp_endpoint", because: "tracing is off without a collector")], valueName: "protocol",
        help: "How spans are encoded for the collector: http/protobuf or http/json."
    ) { $0.configuration.tracing.otlpProtocol = TracingSettings.OTLPProtocol(rawValue: $1.text) ?? .protobuf }

    package static let placement = ClusterSetting(
        "placement", kind: .structured("an array of placement rules"), default: "none", reader: .coordinator,
        help: "Rules in order, first match wins: match (a module-qualified type name or a glob over type names and node paths), then worker: NAME, or pool: NAME with strategy least-loaded (default) or hashed, or strategy any / local. No matching rule: the child runs in the coordinator."
    ) { _, _ in }

    /// Every setting, in the docs' order and the order values are applied in.
    package static let all: [ClusterSetting] = [
        coordinatorEndpoint, coordinatorEndpoints, coordinatorRoot, placementGrace, workers, workerName, workerPool, workerAdminListen,
        heartbeatInterval, heartbeatLiveness, requestDeadline, drainDeadline, rebalanceMovesAtOnce, rebalanceSpread, rebalanceEnabled,
        securityMode, keysDirectory, serverSecretKey, allowedClientKeys, serverPublicKey, clientKeysDirectory, clientSecretKey,
        allowPlaintextOnNetwork, storeKind, storePath, storeURL, storeSync, storeMaxCommitBatch, storeLease, sessionsIdleTimeout, sessionsMax,
        sessionsMaxCreationsPerSecond, sessionsSpreadLease, sessionsAdvertisedURL, sessionsEnabled, snapshotFile, snapshotInterval, logLevel,
        logFormat, gatewayListen, gatewayBearerTokenFile, gatewayHeaderTimeout, gatewayBodyTimeout, gatewayIdleTimeout, gatewayMaxConnections,
        gatewayAllowedOrigins, gatewayStreamWindow, gatewayStreamTick, tracingOTLPEndpoint, tracingOTLPProtocol, placement,
    ]

    /// The setting whose key is `key`.
    package static func named(_ key: String) -> ClusterSetting? {
        all.first { $0.key == key }
    }
}
