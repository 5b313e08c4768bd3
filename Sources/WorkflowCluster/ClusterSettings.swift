import Configuration
import Foundation
import Logging

/// A daemon's effective settings: the validated file with the environment and the command line
/// layered on top (command line > environment > file), through swift-configuration.
///
/// The file is parsed and validated by `ClusterConfigurationParser` (swift-configuration's JSON
/// provider holds scalars only, and the file has arrays of objects); its overridable scalars
/// then form the lowest layer of a `ConfigReader`.
///
/// The structured parts (workers, placement) come from the file only; the scalar settings an
/// operator commonly changes per process or per deployment can be overridden:
///
/// | key                  | flag                         | environment                    |
/// |----------------------|------------------------------|--------------------------------|
/// | log.level            | --log-level                  | WORKFLOW_LOG_LEVEL             |
/// | log.format           | --log-format                 | WORKFLOW_LOG_FORMAT            |
/// | coordinator.endpoint | --endpoint                   | WORKFLOW_COORDINATOR_ENDPOINT  |
/// | coordinator.root     | --root (coordinator)         | WORKFLOW_COORDINATOR_ROOT      |
/// | worker.name          | --name (worker)              | WORKFLOW_WORKER_NAME           |
/// | worker.pool          | --pool (worker)              | WORKFLOW_WORKER_POOL           |
/// | gateway.listen       | --gateway-listen (coord.)    | WORKFLOW_GATEWAY_LISTEN        |
/// | gateway.header_timeout_ms | --gateway-header-timeout-ms | WORKFLOW_GATEWAY_HEADER_TIMEOUT_MS |
/// | gateway.body_timeout_ms   | --gateway-body-timeout-ms   | WORKFLOW_GATEWAY_BODY_TIMEOUT_MS   |
/// | gateway.idle_timeout_ms   | --gateway-idle-timeout-ms   | WORKFLOW_GATEWAY_IDLE_TIMEOUT_MS   |
/// | gateway.max_connections   | --gateway-max-connections   | WORKFLOW_GATEWAY_MAX_CONNECTIONS   |
/// | gateway.allowed_origins   | --gateway-allowed-origins   | WORKFLOW_GATEWAY_ALLOWED_ORIGINS (comma-separated) |
/// | drain.deadline_ms    | --drain-deadline-ms (worker) | WORKFLOW_DRAIN_DEADLINE_MS     |
/// | store.kind           | --store-kind (coordinator)   | WORKFLOW_STORE_KIND            |
/// | store.path           | --store-path (coordinator)   | WORKFLOW_STORE_PATH            |
/// | store.url            | --store-url (coordinator)    | WORKFLOW_STORE_URL             |
/// | store.lease_ms       | --store-lease-ms (coord.)    | WORKFLOW_STORE_LEASE_MS        |
/// | store.sync           | --store-sync (coordinator)   | WORKFLOW_STORE_SYNC            |
/// | store.max_commit_batch | (file, environment)        | WORKFLOW_STORE_MAX_COMMIT_BATCH |
/// | sessions.spread_lease_ms | --sessions-spread-lease-ms | WORKFLOW_SESSIONS_SPREAD_LEASE_MS |
/// | sessions.advertised_url  | --sessions-advertised-url  | WORKFLOW_SESSIONS_ADVERTISED_URL  |
package struct ClusterSettings: Sendable {
    /// The cluster's configuration with overrides applied.
    package var configuration: ClusterConfiguration
    /// This worker's name (workers only; `nil` when neither given nor derivable).
    package var workerName: String?
    /// This worker's pool, when overridden (else the file's entry for `workerName`).
    package var workerPool: String?
    /// The configuration file these settings were read from (named in errors).
    package var file: String
    /// Where spread sessions were set: the file, or the command line/environment (named in
    /// `validateSpreadSessions()`'s errors).
    package var spreadSource = ""
    /// A spread setting of the command line/environment that cannot be applied (not a number,
    /// sessions off): thrown by `validateSpreadSessions()`, a worker ignoring it.
    package var spreadOverrideError: ClusterConfigurationError?

    /// Loads `file`, validates it and applies `environment` and `overrides`.
    ///
    /// Throws `ClusterConfigurationError` for an invalid file or override value.
    package static func load(
        file: String, overrides: ClusterOverrides = ClusterOverrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> ClusterSettings {
        var configuration = try ClusterConfigurationParser(file: file).load()
        let reader = ConfigReader(providers: [
            CommandLineArgumentsProvider(arguments: overrides.configurationArguments),
            EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "workflow"),
            InMemoryProvider(name: file, values: fileLayer(configuration)),
        ])
        let layer = "command line/environment"
        if let endpoint = reader.string(forKey: "coordinator.endpoint"), endpoint != configuration.coordinatorEndpoint {
            // Checked like the file's value: a malformed endpoint is a configuration error here,
            // not an `EINVAL` from the socket later.
            configuration.coordinatorEndpoint = try ClusterEndpoint.validated(endpoint, key: "coordinator.endpoint", source: layer)
        }
        if let root = reader.string(forKey: "coordinator.root") { configuration.root = root }
        if let levelText = reader.string(forKey: "log.level") {
            guard let level = ClusterConfigurationParser.logLevel(levelText) else {
                throw ClusterConfigurationError(
                    file: layer, key: "log.level",
                    expected: "one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))", found: "\"\(levelText)\"")
            }
            configuration.log.level = level
        }
        if let formatText = reader.string(forKey: "log.format") {
            guard let format = LogSettings.Format(rawValue: formatText) else {
                throw ClusterConfigurationError(file: layer, key: "log.format", expected: "\"text\" or \"json\"", found: "\"\(formatText)\"")
            }
            configuration.log.format = format
        }
        if let listen = reader.string(forKey: "gateway.listen"), listen != configuration.gateway.listen?.description {
            configuration.gateway.listen = try ClusterConfigurationParser.gatewayAddress(listen, file: layer)
            try configuration.gateway.validate(file: layer)
        }
        try applyGatewayLimits(reader, to: &configuration.gateway.limits, source: layer)
        try applyAllowedOrigins(reader, to: &configuration.gateway.allowedOrigins, source: layer)
        // Read as `drain.deadline.ms`, whose flag and variable spell like the others'.
        if let deadlineText = reader.string(forKey: "drain.deadline.ms") {
            guard let deadline = ClusterConfigurationParser.drainDeadline(deadlineText) else {
                throw ClusterConfigurationError(
                    file: layer, key: "drain.deadline_ms", expected: "a non-negative integer (milliseconds)", found: "\"\(deadlineText)\"")
            }
            configuration.drainDeadline = deadline
        }
        if let kindText = reader.string(forKey: "store.kind"), kindText != configuration.store.kind.rawValue {
            guard let kind = StoreSettings.Kind(rawValue: kindText) else {
                throw ClusterConfigurationError(
                    file: layer, key: "store.kind",
                    expected: ClusterConfigurationParser.choices(StoreSettings.Kind.self), found: "\"\(kindText)\"")
            }
            configuration.store.kind = kind
        }
        // The file layer holds "" for no path: an empty override cannot be told from it, and
        // names no file either way.
        if let path = reader.string(forKey: "store.path"), !path.isEmpty, path != configuration.store.path {
            configuration.store.path = path
        }
        if let url = reader.string(forKey: "store.url"), !url.isEmpty, url != configuration.store.url {
            configuration.store.url = url
        }
        // Read as `store.lease.ms`, whose flag and variable spell like the others'.
        if let leaseText = reader.string(forKey: "store.lease.ms") {
            guard let milliseconds = Int(leaseText), milliseconds >= StoreSettings.shortestLeaseMilliseconds else {
                throw ClusterConfigurationError(
                    file: layer, key: "store.lease_ms", expected: "an integer of at least \(StoreSettings.shortestLeaseMilliseconds) (milliseconds)",
                    found: "\"\(leaseText)\"")
            }
            configuration.store.lease = .milliseconds(milliseconds)
        }
        if let syncText = reader.string(forKey: "store.sync"), syncText != configuration.store.sync.rawValue {
            guard let sync = StoreSettings.Sync(rawValue: syncText) else {
                throw ClusterConfigurationError(
                    file: layer, key: "store.sync", expected: ClusterConfigurationParser.choices(StoreSettings.Sync.self), found: "\"\(syncText)\"")
            }
            configuration.store.sync = sync
        }
        // Read as `store.max.commit.batch`, whose variable spells like the others'.
        if let batchText = reader.string(forKey: "store.max.commit.batch") {
            guard let batch = Int(batchText), batch > 0 else {
                throw ClusterConfigurationError(
                    file: layer, key: "store.max_commit_batch", expected: "a positive integer (checkpoints per transaction)", found: "\"\(batchText)\"")
            }
            configuration.store.maxCommitBatch = batch
        }
        try configuration.store.validate(source: layer)
        var spreadSource = file
        var spreadOverrideError: ClusterConfigurationError?
        do {
            spreadSource = try applySpread(reader, to: &configuration, file: file)
        } catch {
            spreadOverrideError = error
        }
        var settings = ClusterSettings(
            configuration: configuration, workerName: reader.string(forKey: "worker.name"),
            workerPool: reader.string(forKey: "worker.pool"), file: file)
        settings.spreadSource = spreadSource
        settings.spreadOverrideError = spreadOverrideError
        return settings
    }

    /// The file's entry for the worker called `name`, with the pool override applied.
    ///
    /// A name the file does not list is a configuration error: the placement table refers to
    /// workers by the names the file lists, so an unlisted worker would join under a pool and a
    /// capacity nobody chose and host nothing anyone placed (a typo in `--name` would otherwise
    /// start a worker that silently idles in pool `default`).
    package func workerEntry(named name: String) throws(ClusterConfigurationError) -> WorkerEntry {
        guard var entry = configuration.worker(named: name) else {
            let listed = configuration.workers.isEmpty ? "the file lists none" : "listed: \(configuration.workers.map(\.name).joined(separator: ", "))"
            throw ClusterConfigurationError(
                file: file, key: "workers", expected: "an entry named \"\(name)\" for this worker (\(listed))", found: "no such worker")
        }
        if let workerPool {
            guard !workerPool.isEmpty else {
                throw ClusterConfigurationError(file: "command line/environment", key: "worker.pool", expected: "a non-empty pool name", found: "\"\"")
            }
            entry.pool = workerPool
        }
        return entry
    }

    /// The gateway's limits from the command line or the environment (read as
    /// `gateway.header.timeout.ms`, …, whose flags and variables spell like the others').
    private static func applyGatewayLimits(_ reader: ConfigReader, to limits: inout GatewayLimits, source: String) throws(ClusterConfigurationError) {
        func positive(_ key: String, _ name: String) throws(ClusterConfigurationError) -> Int? {
            guard let text = reader.string(forKey: ConfigKey(key)) else { return nil }
            guard let value = Int(text), value > 0 else {
                throw ClusterConfigurationError(file: source, key: name, expected: "a positive integer", found: "\"\(text)\"")
            }
            return value
        }
        if let ms = try positive("gateway.header.timeout.ms", "gateway.header_timeout_ms") { limits.headerTimeout = .milliseconds(ms) }
        if let ms = try positive("gateway.body.timeout.ms", "gateway.body_timeout_ms") { limits.bodyTimeout = .milliseconds(ms) }
        if let ms = try positive("gateway.idle.timeout.ms", "gateway.idle_timeout_ms") { limits.idleTimeout = .milliseconds(ms) }
        if let count = try positive("gateway.max.connections", "gateway.max_connections") { limits.maxConnections = count }
    }

    /// The pages' origins allowed across origins, from the command line or the environment
    /// (`gateway.allowed.origins`, comma-separated; empty: none), replacing the file's list.
    private static func applyAllowedOrigins(_ reader: ConfigReader, to origins: inout [GatewayOrigin], source: String) throws(ClusterConfigurationError) {
        guard let text = reader.string(forKey: "gateway.allowed.origins") else { return }
        var parsed: [GatewayOrigin] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            parsed.append(try GatewayOrigin.parsing(item, key: "gateway.allowed_origins", source: source))
        }
        origins = parsed
    }

    /// Spread sessions from the command line or the environment (read as
    /// `sessions.spread.lease.ms` and `sessions.advertised.url`); returns the layer that set
    /// them, as errors name it.
    private static func applySpread(
        _ reader: ConfigReader, to configuration: inout ClusterConfiguration, file: String
    ) throws(ClusterConfigurationError) -> String {
        let leaseText = reader.string(forKey: "sessions.spread.lease.ms")
        let advertised = reader.string(forKey: "sessions.advertised.url")
        if let leaseText, !leaseText.isEmpty {
            let layer = "command line/environment"
            guard let milliseconds = Int(leaseText), milliseconds > 0 else {
                throw ClusterConfigurationError(
                    file: layer, key: "sessions.spread_lease_ms", expected: "a positive integer (milliseconds)", found: "\"\(leaseText)\"")
            }
            guard var sessions = configuration.sessions else {
                throw ClusterConfigurationError(
                    file: layer, key: "sessions.spread_lease_ms", expected: "sessions enabled (sessions.enabled is false)", found: "a spread lease")
            }
            sessions.spread = SessionSpreadSettings(lease: .milliseconds(milliseconds), advertisedURL: sessions.spread?.advertisedURL ?? "")
            configuration.sessions = sessions
        }
        if let advertised, !advertised.isEmpty, configuration.sessions?.spread != nil {
            configuration.sessions?.spread?.advertisedURL = advertised
        }
        return leaseText == nil && advertised == nil ? file : "command line/environment"
    }

    /// Checks spread sessions, for a coordinator (a worker reading the same file ignores them):
    /// they need sessions, a PostgreSQL store without a root lease, a lease of at least 300 ms, a
    /// gateway and the URL it is reached at (a path: a reverse proxy's prefix). Normalises the URL
    /// (no trailing slash).
    package mutating func validateSpreadSessions() throws(ClusterConfigurationError) {
        if let spreadOverrideError { throw spreadOverrideError }
        guard let spread = configuration.sessions?.spread else { return }
        let source = spreadSource
        let key = "sessions.spread_lease_ms"
        guard configuration.store.kind == .postgres else {
            throw ClusterConfigurationError(
                file: source, key: key,
                expected: "store.kind \"postgres\": spread sessions are shared through one PostgreSQL database (an SQLite file is one machine's)",
                found: "store.kind \"\(configuration.store.kind.rawValue)\"")
        }
        guard configuration.store.lease == nil else {
            throw ClusterConfigurationError(
                file: source, key: key,
                expected: "no store.lease_ms: spread coordinators all serve at once (each hosts a shared root of its own), none is a standby",
                found: "store.lease_ms set too")
        }
        guard spread.lease >= .milliseconds(StoreSettings.shortestLeaseMilliseconds) else {
            throw ClusterConfigurationError(
                file: source, key: key, expected: "at least \(StoreSettings.shortestLeaseMilliseconds) (milliseconds)",
                found: "\(spread.lease / .milliseconds(1))")
        }
        guard configuration.gateway.listen != nil else {
            throw ClusterConfigurationError(
                file: source, key: "gateway.listen", expected: "a gateway address: spread sessions are reached through the gateways", found: "off")
        }
        let url = URLComponents(string: spread.advertisedURL)
        // A path is a reverse proxy's prefix for this coordinator (`https://app.example/coordinators/a`):
        // the others redirect to the prefix followed by the request's path, the proxy strips it.
        guard let url, url.scheme == "http" || url.scheme == "https", !(url.host ?? "").isEmpty, url.user == nil, url.query == nil,
            url.fragment == nil, !url.path.contains("//"), !url.path.contains(where: \.isWhitespace)
        else {
            throw ClusterConfigurationError(
                file: source, key: "sessions.advertised_url",
                expected: "this coordinator's gateway as clients reach it, http://HOST:PORT (or https), with a path if a reverse proxy prefixes it, http://HOST/PREFIX (where the others redirect its sessions' clients)",
                found: spread.advertisedURL.isEmpty ? "none" : "\"\(spread.advertisedURL)\"")
        }
        if spread.advertisedURL.hasSuffix("/") { configuration.sessions?.spread?.advertisedURL = String(spread.advertisedURL.dropLast()) }
    }

    /// The file's overridable scalars as the reader's lowest layer.
    private static func fileLayer(_ configuration: ClusterConfiguration) -> [AbsoluteConfigKey: ConfigValue] {
        [
            "coordinator.endpoint": ConfigValue(.string(configuration.coordinatorEndpoint), isSecret: false),
            "coordinator.root": ConfigValue(.string(configuration.root), isSecret: false),
            "log.level": ConfigValue(.string(configuration.log.level.rawValue), isSecret: false),
            "log.format": ConfigValue(.string(configuration.log.format.rawValue), isSecret: false),
            "gateway.listen": ConfigValue(.string(configuration.gateway.listen?.description ?? "off"), isSecret: false),
            "store.kind": ConfigValue(.string(configuration.store.kind.rawValue), isSecret: false),
            "store.path": ConfigValue(.string(configuration.store.path ?? ""), isSecret: false),
            "store.url": ConfigValue(.string(configuration.store.url ?? ""), isSecret: true),
            "store.sync": ConfigValue(.string(configuration.store.sync.rawValue), isSecret: false),
            "store.max.commit.batch": ConfigValue(.string("\(configuration.store.maxCommitBatch)"), isSecret: false),
            "drain.deadline.ms": ConfigValue(.string("\(Int((configuration.drainDeadline / .milliseconds(1)).rounded()))"), isSecret: false),
        ]
    }
}
