import Foundation
import WorkflowRemote

/// A daemon's effective settings: the validated file with the environment and the command line
/// layered on top (command line > environment > file).
///
/// Which key, flag and variable each setting has, what it may hold and what it needs are
/// declared once, in `ClusterSetting.all`; this type applies them in that order and checks
/// what they need of each other. The structured parts (workers, placement) come from the file
/// only.
package struct ClusterSettings: Sendable {
    /// The cluster's configuration with overrides applied.
    package var configuration: ClusterConfiguration
    /// This worker's name (workers only; `nil` when neither given nor derivable).
    package var workerName: String?
    /// This worker's pool, when overridden (else the file's entry for `workerName`).
    package var workerPool: String?
    /// Where this worker serves its metrics and liveness (`worker.admin_listen`; `nil`: off).
    package var workerAdminListen: GatewayAddress?
    /// The configuration file these settings were read from (named in errors).
    package var file: String
    /// The settings given, each with where (the file, a flag, a variable).
    package var values: ClusterSettingValues

    /// Settings of `file` holding `values` over the defaults, with the file's `workers` and
    /// `placement`; throws when a required setting is missing or settings contradict each other.
    package init(file: String, values: ClusterSettingValues, workers: [WorkerEntry], placement: PlacementTable) throws(ClusterConfigurationError) {
        self.file = file
        self.values = values
        configuration = ClusterConfiguration(coordinatorEndpoint: "", workers: workers, placement: placement)
        for setting in ClusterSetting.all {
            guard let given = values[setting] else { continue }
            setting.apply(&self, given.value)
        }
        if values[.coordinatorEndpoint] == nil {
            // `endpoints` alone is enough: a coordinator binds its own with --endpoint (or the
            // environment), and the first one is the default.
            guard let first = configuration.coordinatorEndpoints.first else {
                throw ClusterConfigurationError(file: file, key: ClusterSetting.coordinatorEndpoint.key, expected: "a value (the key is required)", found: "nothing")
            }
            configuration.coordinatorEndpoint = first
        }
        // Every key file defaults to where `keygen --config` writes it, so a CURVE cluster needs
        // no key paths in its file at all.
        let keys = configuration.security.keysDirectory ?? Self.beside(file, "keys")
        configuration.security.keysDirectory = keys
        configuration.security.serverPublicKeyPath = configuration.security.serverPublicKeyPath ?? keys + "/" + CurveKeyFiles.Layout.coordinatorPublic
        configuration.security.serverSecretKeyPath = configuration.security.serverSecretKeyPath ?? keys + "/" + CurveKeyFiles.Layout.coordinatorSecret
        configuration.security.allowedClientKeysPath = configuration.security.allowedClientKeysPath ?? keys + "/" + CurveKeyFiles.Layout.allowList
        configuration.security.clientKeysDirectory = configuration.security.clientKeysDirectory ?? keys + "/" + CurveKeyFiles.Layout.workers
        try values.checkRules(coordinatorOnly: false)
        try configuration.gateway.validate(file: values[.gatewayListen]?.source ?? file)
        if let endpoint = configuration.tracing.otlpEndpoint, !TracingSettings.isValidEndpoint(endpoint) {
            let setting = ClusterSetting.tracingOTLPEndpoint
            let given = values[setting]
            throw ClusterConfigurationError(
                file: given?.source ?? file, key: setting.key, expected: setting.kind.expected, found: "\"\(endpoint)\"", via: given?.via)
        }
    }

    /// Loads `file`, validates it and applies `environment` and `overrides`.
    ///
    /// Throws `ClusterConfigurationError` for an invalid file or override value, or settings
    /// that contradict each other.
    package static func load(
        file: String, overrides: ClusterOverrides = ClusterOverrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> ClusterSettings {
        let document = try ClusterConfigurationParser(file: file).loadDocument()
        let values = document.values.overlaid(with: try ClusterSettingValues.reading(overrides, environment: environment))
        return try ClusterSettings(file: file, values: values, workers: document.workers, placement: document.placement)
    }

    /// `path` beside the configuration file `file` (absolute paths as they are), so a
    /// configuration and its keys can move together.
    static func beside(_ file: String, _ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
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
                file: file, key: ClusterSetting.workers.key, expected: "an entry named \"\(name)\" for this worker (\(listed))", found: "no such worker")
        }
        if let workerPool { entry.pool = workerPool }
        return entry
    }

    /// Checks that `coordinator.root` names a root `roots` can host: a name not registered is a
    /// configuration error naming where it was set (the file, `--root` or the variable).
    package func checkRoot(in roots: RootWorkflowRegistry) throws(ClusterConfigurationError) {
        do {
            _ = try roots.root(configured: configuration.root)
        } catch {
            let given = values[.coordinatorRoot]
            throw ClusterConfigurationError(
                file: given?.source ?? file, key: ClusterSetting.coordinatorRoot.key, expected: "the name of a root workflow the coordinator registers",
                found: error.description, via: given?.via)
        }
    }

    /// Checks the coordinator's own rules (a worker reading the same file ignores them): spread
    /// sessions need a PostgreSQL store without a root lease, a gateway and the URL it is
    /// reached at (a path: a reverse proxy's prefix). Normalises the URL (no trailing slash).
    package mutating func validateSpreadSessions() throws(ClusterConfigurationError) {
        try values.checkRules(coordinatorOnly: true)
        guard let spread = configuration.sessions?.spread else { return }
        let url = URLComponents(string: spread.advertisedURL)
        // A path is a reverse proxy's prefix for this coordinator (`https://app.example/coordinators/a`):
        // the others redirect to the prefix followed by the request's path, the proxy strips it.
        guard let url, url.scheme == "http" || url.scheme == "https", !(url.host ?? "").isEmpty, url.user == nil, url.query == nil,
            url.fragment == nil, !url.path.contains("//"), !url.path.contains(where: \.isWhitespace)
        else {
            let setting = ClusterSetting.sessionsAdvertisedURL
            let given = values[setting]
            throw ClusterConfigurationError(
                file: given?.source ?? file, key: setting.key, expected: setting.kind.expected + " (where the others redirect its sessions' clients)",
                found: "\"\(spread.advertisedURL)\"", via: given?.via)
        }
        if spread.advertisedURL.hasSuffix("/") { configuration.sessions?.spread?.advertisedURL = String(spread.advertisedURL.dropLast()) }
    }
}
