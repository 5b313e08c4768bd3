import Foundation
import Logging
import WorkflowRemote

/// Reads and validates a cluster configuration file (JSON).
///
/// Validation is strict and complete at start: a wrong type, a missing required key, an unknown
/// key or an unknown enumeration value is a `ClusterConfigurationError` naming the file, the key
/// and what was expected. A daemon that started is therefore running on exactly what the file
/// says (unknown keys are rejected because a typo would otherwise be silently ignored).
package struct ClusterConfigurationParser: Sendable {
    /// The file's path, as reported in errors.
    package let file: String

    /// Creates a parser whose errors name `file`.
    package init(file: String) {
        self.file = file
    }

    /// Reads and parses the file at `file`.
    package func load() throws -> ClusterConfiguration {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw ClusterConfigurationError(noSuchFile: file)
        }
        guard !isDirectory.boolValue else {
            throw ClusterConfigurationError(file: file, key: "", expected: "a readable JSON file", found: "a directory")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason = access(file, R_OK) != 0 ? "a file this user may not read" : "an unreadable file"
            throw ClusterConfigurationError(file: file, key: "", expected: "a readable JSON file", found: reason)
        }
        return try parse(data)
    }

    /// Parses a configuration document.
    package func parse(_ data: Data) throws -> ClusterConfiguration {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: data)
        } catch {
            let position = JSONSyntaxLocator.firstError(in: Array(data))
            let found = position.map { "invalid JSON at line \($0.line), column \($0.column): \($0.problem)" } ?? "text that is not JSON"
            throw fail("", "a JSON object", found: found)
        }
        let root = try object(document, "")
        try allowOnly(root, "", ["coordinator", "workers", "heartbeat", "request", "security", "log", "placement", "snapshot", "gateway", "drain", "rebalance", "store", "sessions"])

        let coordinator = try object(try required(root, "coordinator"), "coordinator")
        try allowOnly(coordinator, "coordinator", ["endpoint", "endpoints", "root", "placement_grace_ms"])
        let endpoints = try coordinator["endpoints"].map(parseCoordinatorEndpoints) ?? []
        // `endpoints` alone is enough: a coordinator binds its own with --endpoint (or the
        // environment), and the first one is the default.
        let endpoint: String
        if let first = endpoints.first, coordinator["endpoint"] == nil {
            endpoint = first
        } else {
            endpoint = try ClusterEndpoint.validated(
                try string(try required(coordinator, "endpoint", in: "coordinator"), "coordinator.endpoint"), key: "coordinator.endpoint", source: file)
        }
        var configuration = ClusterConfiguration(coordinatorEndpoint: endpoint)
        configuration.coordinatorEndpoints = endpoints
        if let rootName = coordinator["root"] { configuration.root = try string(rootName, "coordinator.root") }
        if let grace = coordinator["placement_grace_ms"] {
            configuration.placementGrace = .milliseconds(try nonNegativeInt(grace, "coordinator.placement_grace_ms"))
        }

        if let workers = root["workers"] {
            configuration.workers = try parseWorkers(workers)
        }
        if let heartbeat = root["heartbeat"] {
            let object = try object(heartbeat, "heartbeat")
            try allowOnly(object, "heartbeat", ["interval_ms", "liveness"])
            if let interval = object["interval_ms"] {
                configuration.heartbeatInterval = .milliseconds(try positiveInt(interval, "heartbeat.interval_ms"))
            }
            if let liveness = object["liveness"] { configuration.heartbeatLiveness = try positiveInt(liveness, "heartbeat.liveness") }
        }
        if let request = root["request"] {
            let object = try object(request, "request")
            try allowOnly(object, "request", ["deadline_ms"])
            if let deadline = object["deadline_ms"] {
                configuration.requestDeadline = .milliseconds(try positiveInt(deadline, "request.deadline_ms"))
            }
        }
        if let drain = root["drain"] {
            let object = try object(drain, "drain")
            try allowOnly(object, "drain", ["deadline_ms"])
            if let deadline = object["deadline_ms"] {
                configuration.drainDeadline = .milliseconds(try nonNegativeInt(deadline, "drain.deadline_ms"))
            }
        }
        if let rebalance = root["rebalance"] {
            let object = try object(rebalance, "rebalance")
            try allowOnly(object, "rebalance", ["enabled", "moves_at_once", "spread"])
            var policy = RebalancePolicy()
            if let moves = object["moves_at_once"] { policy.movesAtOnce = try positiveInt(moves, "rebalance.moves_at_once") }
            if let spread = object["spread"] {
                let value = try positiveInt(spread, "rebalance.spread")
                guard value >= 2 else { throw fail("rebalance.spread", "an integer of at least 2", found: "\(value)") }
                policy.spread = value
            }
            configuration.rebalancing = try enabled(object, "rebalance") ? policy : nil
        }
        if let sessions = root["sessions"] {
            let object = try object(sessions, "sessions")
            try allowOnly(
                object, "sessions", ["enabled", "idle_timeout_ms", "max_sessions", "max_creations_per_second", "spread_lease_ms", "advertised_url"])
            var settings = SessionSettings()
            if let idle = object["idle_timeout_ms"] { settings.idleTimeout = .milliseconds(try positiveInt(idle, "sessions.idle_timeout_ms")) }
            if let limit = object["max_sessions"] { settings.maxSessions = try positiveInt(limit, "sessions.max_sessions") }
            if let rate = object["max_creations_per_second"] {
                settings.maxCreationsPerSecond = Double(try positiveInt(rate, "sessions.max_creations_per_second"))
            }
            let advertised = try object["advertised_url"].flatMap { $0 is NSNull ? nil : try string($0, "sessions.advertised_url") }
            if let lease = object["spread_lease_ms"], !(lease is NSNull) {
                settings.spread = SessionSpreadSettings(
                    lease: .milliseconds(try positiveInt(lease, "sessions.spread_lease_ms")), advertisedURL: advertised ?? "")
            } else if advertised != nil {
                throw fail("sessions.advertised_url", "no advertised URL unless sessions.spread_lease_ms is set (it is where other coordinators send this one's sessions' clients)", found: "a URL without a spread lease")
            }
            configuration.sessions = try enabled(object, "sessions") ? settings : nil
        }
        if let snapshot = root["snapshot"] {
            let object = try object(snapshot, "snapshot")
            try allowOnly(object, "snapshot", ["file", "interval_ms"])
            if let file = object["file"], !(file is NSNull) {
                let text = try string(file, "snapshot.file")
                guard !text.isEmpty else { throw fail("snapshot.file", "a file path", found: "\"\"") }
                configuration.snapshotFile = text
            }
            if let interval = object["interval_ms"] {
                configuration.snapshotInterval = .milliseconds(try positiveInt(interval, "snapshot.interval_ms"))
            }
        }
        if let gateway = root["gateway"] { configuration.gateway = try parseGateway(gateway) }
        if let store = root["store"] { configuration.store = try parseStore(store) }
        configuration.security = try parseSecurity(root["security"] ?? [String: Any]())
        if let log = root["log"] { configuration.log = try parseLog(log) }
        if let placement = root["placement"] {
            configuration.placement = try parsePlacement(placement, workers: configuration.workers)
        }
        return configuration
    }

    /// Parses a log level name, for the file and for overrides.
    package static func logLevel(_ text: String) -> Logger.Level? {
        Logger.Level(rawValue: text.lowercased())
    }

    // MARK: - Sections

    private func parseWorkers(_ value: Any) throws -> [WorkerEntry] {
        guard let array = value as? [Any] else { throw fail("workers", "an array of worker objects", found: describe(value)) }
        var names: Set<String> = []
        return try array.enumerated().map { index, element in
            let key = "workers[\(index)]"
            let object = try object(element, key)
            try allowOnly(object, key, ["name", "pool", "capacity"])
            let name = try string(try required(object, "name", in: key), "\(key).name")
            guard !name.isEmpty else { throw fail("\(key).name", "a non-empty worker name", found: "\"\"") }
            guard names.insert(name).inserted else { throw fail("\(key).name", "a worker name not used by another worker", found: "\"\(name)\"") }
            var entry = WorkerEntry(name: name)
            if let pool = object["pool"] { entry.pool = try string(pool, "\(key).pool") }
            if let capacity = object["capacity"] { entry.capacity = try positiveInt(capacity, "\(key).capacity") }
            return entry
        }
    }

    private func parseSecurity(_ value: Any) throws -> SecuritySettings {
        let object = try object(value, "security")
        try allowOnly(object, "security", [
            "mode", "keys_dir", "server_public_key", "server_secret_key", "allowed_client_keys", "client_keys_dir", "client_secret_key",
            "allow_plaintext_on_network",
        ])
        var settings = SecuritySettings()
        if let mode = object["mode"] { settings.mode = try oneOf(mode, "security.mode") }
        func path(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            let text = try string(value, "security.\(key)")
            guard !text.isEmpty else { throw fail("security.\(key)", "a file path", found: "\"\"") }
            return besideFile(text)
        }
        // Every key file defaults to where `keygen --config` writes it, so a CURVE cluster
        // needs no key paths in its file at all.
        let keys = try path("keys_dir") ?? besideFile("keys")
        settings.keysDirectory = keys
        settings.serverPublicKeyPath = try path("server_public_key") ?? keys + "/" + CurveKeyFiles.Layout.coordinatorPublic
        settings.serverSecretKeyPath = try path("server_secret_key") ?? keys + "/" + CurveKeyFiles.Layout.coordinatorSecret
        settings.allowedClientKeysPath = try path("allowed_client_keys") ?? keys + "/" + CurveKeyFiles.Layout.allowList
        settings.clientKeysDirectory = try path("client_keys_dir") ?? keys + "/" + CurveKeyFiles.Layout.workers
        settings.clientSecretKeyPath = try path("client_secret_key")
        if let allow = object["allow_plaintext_on_network"] {
            guard !(allow is String), let flag = allow as? Bool else {
                throw fail("security.allow_plaintext_on_network", "true or false", found: describe(allow))
            }
            settings.allowPlaintextOnNetwork = flag
        }
        return settings
    }

    /// `path` resolved against the configuration file's directory (absolute paths as they are),
    /// so a configuration and its keys can move together.
    private func besideFile(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
    }

    /// `coordinator.endpoints`: every coordinator's endpoint, each checked as `coordinator.endpoint` is.
    private func parseCoordinatorEndpoints(_ value: Any) throws -> [String] {
        guard let list = value as? [Any], !list.isEmpty else {
            throw fail("coordinator.endpoints", "a non-empty array of endpoints (one per coordinator)", found: describe(value))
        }
        return try list.enumerated().map { index, item in
            let key = "coordinator.endpoints[\(index)]"
            return try ClusterEndpoint.validated(try string(item, key), key: key, source: file)
        }
    }

    private func parseStore(_ value: Any) throws -> StoreSettings {
        let object = try object(value, "store")
        try allowOnly(object, "store", ["kind", "path", "url", "lease_ms", "sync", "max_commit_batch"])
        var settings = StoreSettings()
        if let kind = object["kind"] { settings.kind = try oneOf(kind, "store.kind") }
        if let sync = object["sync"], !(sync is NSNull) { settings.sync = try oneOf(sync, "store.sync") }
        if let batch = object["max_commit_batch"], !(batch is NSNull) { settings.maxCommitBatch = try positiveInt(batch, "store.max_commit_batch") }
        if let path = object["path"], !(path is NSNull) {
            let text = try string(path, "store.path")
            guard !text.isEmpty else { throw fail("store.path", "a file path", found: "\"\"") }
            settings.path = besideFile(text)
        }
        if let url = object["url"], !(url is NSNull) {
            let text = try string(url, "store.url")
            guard !text.isEmpty else { throw fail("store.url", "a PostgreSQL URL", found: "\"\"") }
            settings.url = text
        }
        if let lease = object["lease_ms"], !(lease is NSNull) {
            let milliseconds = try positiveInt(lease, "store.lease_ms")
            guard milliseconds >= StoreSettings.shortestLeaseMilliseconds else {
                throw fail("store.lease_ms", "at least \(StoreSettings.shortestLeaseMilliseconds) (milliseconds)", found: "\(milliseconds)")
            }
            settings.lease = .milliseconds(milliseconds)
        }
        try settings.validate(source: file)
        return settings
    }

    private func parseGateway(_ value: Any) throws -> GatewaySettings {
        let object = try object(value, "gateway")
        try allowOnly(
            object, "gateway",
            ["listen", "bearer_token_file", "header_timeout_ms", "body_timeout_ms", "idle_timeout_ms", "max_connections", "allowed_origins"])
        var settings = GatewaySettings()
        if let listen = object["listen"], !(listen is NSNull) {
            settings.listen = try Self.gatewayAddress(try string(listen, "gateway.listen"), file: file)
        }
        if let tokenFile = object["bearer_token_file"], !(tokenFile is NSNull) {
            let text = try string(tokenFile, "gateway.bearer_token_file")
            guard !text.isEmpty else { throw fail("gateway.bearer_token_file", "a file path", found: "\"\"") }
            settings.bearerTokenFile = besideFile(text)
        }
        if let value = object["header_timeout_ms"] {
            settings.limits.headerTimeout = .milliseconds(try positiveInt(value, "gateway.header_timeout_ms"))
        }
        if let value = object["body_timeout_ms"] {
            settings.limits.bodyTimeout = .milliseconds(try positiveInt(value, "gateway.body_timeout_ms"))
        }
        if let value = object["idle_timeout_ms"] {
            settings.limits.idleTimeout = .milliseconds(try positiveInt(value, "gateway.idle_timeout_ms"))
        }
        if let value = object["max_connections"] { settings.limits.maxConnections = try positiveInt(value, "gateway.max_connections") }
        if let value = object["allowed_origins"], !(value is NSNull) {
            guard let list = value as? [Any] else { throw fail("gateway.allowed_origins", "an array of origins", found: describe(value)) }
            settings.allowedOrigins = try list.enumerated().map { index, item in
                try GatewayOrigin.parsing(try string(item, "gateway.allowed_origins[\(index)]"), key: "gateway.allowed_origins[\(index)]", source: file)
            }
        }
        try settings.validate(file: file)
        return settings
    }

    /// Parses a gateway address for the file and for overrides: `host:port`, or `off` (no
    /// gateway, `nil`).
    static func gatewayAddress(_ text: String, file: String) throws(ClusterConfigurationError) -> GatewayAddress? {
        try GatewayAddress.parsing(text, key: "gateway.listen", source: file)
    }

    private func parseLog(_ value: Any) throws -> LogSettings {
        let object = try object(value, "log")
        try allowOnly(object, "log", ["level", "format"])
        var settings = LogSettings()
        if let level = object["level"] {
            let text = try string(level, "log.level")
            guard let parsed = Self.logLevel(text) else {
                throw fail("log.level", "one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))", found: "\"\(text)\"")
            }
            settings.level = parsed
        }
        if let format = object["format"] {
            let text = try string(format, "log.format")
            guard let parsed = LogSettings.Format(rawValue: text) else {
                throw fail("log.format", "\"text\" or \"json\"", found: "\"\(text)\"")
            }
            settings.format = parsed
        }
        return settings
    }

    private func parsePlacement(_ value: Any, workers: [WorkerEntry]) throws -> PlacementTable {
        guard let array = value as? [Any] else { throw fail("placement", "an array of placement rules", found: describe(value)) }
        let rules = try array.enumerated().map { index, element -> PlacementTable.Rule in
            let key = "placement[\(index)]"
            let object = try object(element, key)
            try allowOnly(object, key, ["match", "worker", "pool", "strategy"])
            let pattern = try string(try required(object, "match", in: key), "\(key).match")
            guard !pattern.isEmpty else { throw fail("\(key).match", "a type name or a path glob", found: "\"\"") }
            switch (object["worker"], object["pool"]) {
            case (let worker?, nil):
                guard object["strategy"] == nil else {
                    throw fail("\(key).strategy", "no strategy with \"worker\" (strategies choose within a pool)")
                }
                let name = try string(worker, "\(key).worker")
                guard workers.contains(where: { $0.name == name }) else {
                    let listed = workers.isEmpty ? "none is listed" : "listed: \(workers.map(\.name).joined(separator: ", "))"
                    throw fail("\(key).worker", "the name of a worker listed in \"workers\" (\(listed))", found: "\"\(name)\"")
                }
                return PlacementTable.Rule(pattern: pattern, placement: .worker(name))
            case (nil, let pool?):
                let poolName = try string(pool, "\(key).pool")
                let strategy = try object["strategy"].map { try string($0, "\(key).strategy") } ?? "least-loaded"
                switch strategy {
                case "least-loaded": return PlacementTable.Rule(pattern: pattern, placement: .pool(poolName))
                case "hashed": return PlacementTable.Rule(pattern: pattern, placement: .hashed(pool: poolName))
                default: throw fail("\(key).strategy", "\"least-loaded\" or \"hashed\"", found: "\"\(strategy)\"")
                }
            case (nil, nil):
                if object["strategy"] as? String == "any" { return PlacementTable.Rule(pattern: pattern, placement: .anyWorker) }
                if object["strategy"] as? String == "local" { return PlacementTable.Rule(pattern: pattern, placement: .local) }
                throw fail(key, "exactly one of \"worker\" or \"pool\" (or \"strategy\": \"any\" / \"local\")")
            case (_?, _?):
                throw fail(key, "exactly one of \"worker\" or \"pool\", not both")
            }
        }
        return PlacementTable(rules: rules)
    }

    // MARK: - Typed access

    private func fail(_ key: String, _ expected: String, found: String? = nil) -> ClusterConfigurationError {
        ClusterConfigurationError(file: file, key: key, expected: expected, found: found)
    }

    private func object(_ value: Any, _ key: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw fail(key, "an object", found: describe(value)) }
        return object
    }

    private func required(_ object: [String: Any], _ name: String, in parent: String = "") throws -> Any {
        guard let value = object[name] else {
            throw fail(parent.isEmpty ? name : "\(parent).\(name)", "a value (the key is required)", found: "nothing")
        }
        return value
    }

    private func allowOnly(_ object: [String: Any], _ key: String, _ allowed: [String]) throws {
        for name in object.keys.sorted() where !allowed.contains(name) {
            throw fail(key.isEmpty ? name : "\(key).\(name)", "no such key (known keys: \(allowed.joined(separator: ", ")))", found: "an unknown key")
        }
    }

    private func string(_ value: Any, _ key: String) throws -> String {
        guard let text = value as? String else { throw fail(key, "a string", found: describe(value)) }
        return text
    }

    /// The string at `key` as one of `Choice`'s cases.
    private func oneOf<Choice: RawRepresentable & CaseIterable>(_ value: Any, _ key: String) throws -> Choice where Choice.RawValue == String {
        let text = try string(value, key)
        guard let parsed = Choice(rawValue: text) else { throw fail(key, Self.choices(Choice.self), found: "\"\(text)\"") }
        return parsed
    }

    /// "one of "a", "b"": what a key taking one of `Choice`'s cases expects, for its errors.
    static func choices<Choice: RawRepresentable & CaseIterable>(_: Choice.Type) -> String where Choice.RawValue == String {
        "one of " + Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
    }

    /// A section's `enabled` (`true` when absent: a section written is meant to be on).
    private func enabled(_ object: [String: Any], _ section: String) throws -> Bool {
        guard let value = object["enabled"] else { return true }
        guard !(value is String), let flag = value as? Bool else { throw fail("\(section).enabled", "true or false", found: describe(value)) }
        return flag
    }

    private func positiveInt(_ value: Any, _ key: String) throws -> Int {
        guard !(value is String), let number = value as? NSNumber,
            let integer = Int(exactly: number.doubleValue), integer > 0
        else { throw fail(key, "a positive integer", found: describe(value)) }
        return integer
    }

    private func nonNegativeInt(_ value: Any, _ key: String) throws -> Int {
        guard !(value is String), let number = value as? NSNumber,
            let integer = Int(exactly: number.doubleValue), integer >= 0
        else { throw fail(key, "a non-negative integer", found: describe(value)) }
        return integer
    }

    /// Parses a drain deadline in milliseconds for overrides (`nil`: not a non-negative integer).
    static func drainDeadline(_ text: String) -> Duration? {
        guard let milliseconds = Int(text), milliseconds >= 0 else { return nil }
        return .milliseconds(milliseconds)
    }

    private func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is String: "a string (\"\(value)\")"
        case let number as NSNumber: "a number or boolean (\(number))"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: "\(type(of: value))"
        }
    }
}
