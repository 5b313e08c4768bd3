import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import WorkflowCluster
import WorkflowGateway

/// `COORDINATOR [serve]`: hosts the cluster's root workflow and places its children on workers,
/// with the application's own flags (`Extension`) added.
struct ServeCommand<Extension: CoordinatorCommandExtension>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "serve",
            abstract: "Hosts a root workflow whose children run on worker processes (the default).",
            discussion: """
                Binds the cluster endpoint from the configuration file, hosts the root workflow named by \
                coordinator.root and places its remote children as the file's placement table says. Serves \
                until SIGTERM or SIGINT, then stops the tree and exits 0. Settings are taken from the command \
                line, then WORKFLOW_* environment variables, then the file. Logs go to standard error; \
                renderings (--print-renderings) to standard output.
                """)
    }

    @OptionGroup var daemon: DaemonOptions

    @Option(name: .long, help: ArgumentHelp("The endpoint to bind (tcp://host:port or ipc://path). Overrides coordinator.endpoint and WORKFLOW_COORDINATOR_ENDPOINT.", valueName: "endpoint"))
    var endpoint: String?

    @Option(name: .long, help: ArgumentHelp("The root workflow to host, by its registered name. Overrides coordinator.root and WORKFLOW_COORDINATOR_ROOT.", valueName: "name"))
    var root: String?

    @Option(name: .long, help: ArgumentHelp("Print each settled rendering of the root on standard output: none (default), text (a small screen) or json (one line per rendering or status change).", valueName: "mode"))
    var printRenderings: String = "none"

    @Option(name: .long, help: ArgumentHelp("Write the root's tree snapshot to this file (atomically) every --snapshot-interval-ms and on SIGTERM. Overrides snapshot.file.", valueName: "file"))
    var snapshotFile: String?

    @Option(name: .long, help: ArgumentHelp("How often to write the snapshot, in milliseconds (default 1000). Overrides snapshot.interval_ms.", valueName: "ms"))
    var snapshotIntervalMs: Int?

    @Option(name: .long, help: ArgumentHelp("Start the root from this snapshot file (written by --snapshot-file). A missing or corrupt file stops the coordinator (exit 78); omit --restore to start fresh.", valueName: "file"))
    var restore: String?

    @Option(name: .long, help: ArgumentHelp("Where the coordinator keeps every accepted event before answering it: none, sqlite or postgres. Overrides store.kind and WORKFLOW_STORE_KIND.", valueName: "kind"))
    var storeKind: String?

    @Option(name: .long, help: ArgumentHelp("The SQLite store's file (created if missing; the root resumes from it at every start). Overrides store.path and WORKFLOW_STORE_PATH.", valueName: "file"))
    var storePath: String?

    @Option(name: .long, help: ArgumentHelp("The PostgreSQL store's database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or postgres://USER@/DATABASE?host=SOCKET_DIR&port=PORT; optional connect_timeout and operation_timeout (seconds). Overrides store.url and WORKFLOW_STORE_URL.", valueName: "url"))
    var storeURL: String?

    @Option(name: .long, help: ArgumentHelp("When the SQLite store's commits reach the disk: full (default: fsynced before an event is answered, survives a machine crash) or normal (written before, fsynced later: survives a coordinator crash, SIGKILL included, not a machine crash). Overrides store.sync and WORKFLOW_STORE_SYNC.", valueName: "mode"))
    var storeSync: String?

    @Option(name: .long, help: ArgumentHelp("Share the PostgreSQL store with standby coordinators under a lease of this many milliseconds (at least 300; 2000 recommended): start as a standby, lead while holding the lease, exit 75 when it cannot be renewed. Overrides store.lease_ms and WORKFLOW_STORE_LEASE_MS.", valueName: "ms"))
    var storeLeaseMs: String?

    @Option(name: .long, help: ArgumentHelp("Spread sessions over the coordinators sharing the PostgreSQL store, each session owned by one at a time under a lease of this many milliseconds (at least 300; 1500 recommended). Overrides sessions.spread_lease_ms and WORKFLOW_SESSIONS_SPREAD_LEASE_MS.", valueName: "ms"))
    var sessionsSpreadLeaseMs: String?

    @Option(name: .long, help: ArgumentHelp("This coordinator's gateway as clients reach it (http://HOST:PORT), where the other coordinators redirect requests for the sessions it owns. Overrides sessions.advertised_url and WORKFLOW_SESSIONS_ADVERTISED_URL.", valueName: "url"))
    var sessionsAdvertisedURL: String?

    @Flag(name: .long, help: "Read events for the root from standard input, one JSON object per line: {\"token\": TOKEN, \"event\": EVENT}, TOKEN a sink token of a printed rendering; each line is answered on standard output.")
    var eventsFromStdin = false

    @Option(name: .long, help: ArgumentHelp("Serve the HTTP gateway (renderings, events, inspector, metrics, health) at host:port, or 'off'. Overrides gateway.listen and WORKFLOW_GATEWAY_LISTEN.", valueName: "host:port"))
    var gatewayListen: String?

    @Option(name: .long, help: ArgumentHelp("The longest a request head may take to arrive (408 and closed after). Overrides gateway.header_timeout_ms.", valueName: "ms"))
    var gatewayHeaderTimeoutMs: String?

    @Option(name: .long, help: ArgumentHelp("The longest a request body may take to arrive, from its head. Overrides gateway.body_timeout_ms.", valueName: "ms"))
    var gatewayBodyTimeoutMs: String?

    @Option(name: .long, help: ArgumentHelp("How long a connection may wait for its next request. Overrides gateway.idle_timeout_ms.", valueName: "ms"))
    var gatewayIdleTimeoutMs: String?

    @Option(name: .long, help: ArgumentHelp("The most client connections open at once (one more: 503). Overrides gateway.max_connections.", valueName: "count"))
    var gatewayMaxConnections: String?

    @Option(name: .long, help: ArgumentHelp("Pages' origins that may call this gateway across origins (CORS), comma-separated, e.g. https://app.example. Overrides gateway.allowed_origins and WORKFLOW_GATEWAY_ALLOWED_ORIGINS.", valueName: "origins"))
    var gatewayAllowedOrigins: String?

    @Flag(name: .long, help: "Print the names of the workers the configuration lists, one per line, and exit (used by scripts/cluster.sh).")
    var listWorkers = false

    @OptionGroup var application: Extension

    func validate() throws {
        guard RenderingPrintMode(rawValue: printRenderings) != nil else {
            throw ValidationError("--print-renderings must be one of none, text, json (got \(printRenderings))")
        }
        if let snapshotIntervalMs, snapshotIntervalMs <= 0 {
            throw ValidationError("--snapshot-interval-ms must be a positive integer (got \(snapshotIntervalMs))")
        }
    }

    func run(roots: RootWorkflowRegistry, webAssets: [WebAsset]) async throws {
        let program = ExecutableName.current(or: "workflow-coordinator")
        var settings: ClusterSettings
        do {
            settings = try await ClusterSettings.load(
                file: daemon.config,
                overrides: gatewayLimitOverrides(
                    ClusterOverrides(
                        logLevel: daemon.logLevel, logFormat: daemon.logFormat, coordinatorEndpoint: endpoint, root: root, gatewayListen: gatewayListen,
                        storeKind: storeKind, storePath: storePath, storeURL: storeURL, storeSync: storeSync)))
            // A coordinator's own check: workers reading the same file ignore spread sessions.
            try settings.validateSpreadSessions()
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        if listWorkers {
            for worker in settings.configuration.workers { print(worker.name) }
            return
        }
        do {
            _ = try roots.root(configured: settings.configuration.root)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        ClusterDaemon.setProcessLabel("coordinator")
        let logger = Logger.cluster(label: "coordinator", node: "coordinator", settings: settings.configuration.log)
        var configuration = settings.configuration
        if let snapshotFile { configuration.snapshotFile = snapshotFile }
        if let snapshotIntervalMs { configuration.snapshotInterval = .milliseconds(snapshotIntervalMs) }
        let service: CoordinatorService
        do {
            // Read before any socket: a bad snapshot stops the coordinator at start.
            let restored = try restore.map(SnapshotFile.load)
            // Key files are read now, before any socket: a bad key stops the coordinator at start.
            var options = CoordinatorOptions(printMode: RenderingPrintMode(rawValue: printRenderings) ?? .none, restoredSnapshot: restored)
            if eventsFromStdin { options.companions.append(StandardInputEvents()) }
            if let address = configuration.gateway.listen {
                // The daemon's entry point is the one place that bootstraps the process-global
                // metrics system; the runtime and the gateway record into it, /metrics reads it.
                let registry = PrometheusCollectorRegistry()
                MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
                let gateway = ClusterGateway(
                    options: GatewayOptions(
                        address: address, bearerToken: try configuration.gateway.loadBearerToken(), assets: webAssets,
                        metricsRegistry: registry, limits: configuration.gateway.limits, allowedOrigins: configuration.gateway.allowedOrigins))
                options.companions.append(gateway)
                options.standbyCompanions.append(gateway)
            }
            application.configure(&options)
            let security = try CurveKeyFiles.serverSecurity(settings.configuration)
            // The store last (it must be closed if anything after it fails), still before any
            // socket: a bad path or an unreadable checkpoint stops the coordinator at start, and
            // this process becomes the store's writer.
            let holder = "coordinator pid \(getpid()) at \(configuration.coordinatorEndpoint)"
            if let spread = configuration.sessions?.spread, let url = configuration.store.url {
                // Every coordinator serves at once: no writer to become, each session's lease is
                // taken when it is created or asked for.
                let store = try await PostgresCoordinatorStore.open(
                    url: url, fencesSessionsByLease: true, maxCommitBatch: configuration.store.maxCommitBatch, logger: logger)
                // Unique across hosts and restarts: a restarted coordinator owns none of its
                // predecessor's sessions until it takes them over like any other.
                let incarnation = String(UInt64.random(in: 0...UInt64.max), radix: 16)
                options.sessionSpread = SessionSpread(store: store, holder: "\(holder) (\(incarnation))", settings: spread)
            } else             if let lease = configuration.store.lease, let url = configuration.store.url {
                // A standby first: the store is reached now (a wrong URL or an unreachable
                // database stops the coordinator at start), the lease taken when it runs out.
                let store = try await PostgresCoordinatorStore.open(
                    url: url, leaseConnection: true, maxCommitBatch: configuration.store.maxCommitBatch, logger: logger)
                options.leadership = CoordinatorLeadership(
                    store: store, storeName: store.name, holder: holder, schedule: LeaseSchedule(lease: lease), logger: logger
                ) { _ in
                    // Stepping down is ending the process at once: nothing more is accepted or
                    // written, the endpoint and the gateway's port are released, and the
                    // supervisor starts this coordinator again, as a standby.
                    Foundation.exit(CoordinatorLeadership.steppedDownExitStatus)
                }
                if restore != nil { logger.warning("--restore ignored: a coordinator with a lease resumes from the store's checkpoint") }
            } else {
                options.store = try await OpenedCoordinatorStore.open(configuration.store, holder: holder, logger: logger)
            }
            if let restore, let checkpoint = options.store?.checkpoint {
                // The store's checkpoint is newer than any snapshot file (it is committed with
                // every accepted event); the file only seeds an empty store.
                logger.warning(
                    "--restore ignored: the store holds checkpoint \(checkpoint.number), which the root resumes from",
                    metadata: ["file": "\(restore)"])
            }
            service = CoordinatorService(
                configuration: configuration, options: options, roots: roots,
                security: security, logger: logger)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        do {
            try await ClusterDaemon.run(service, logger: logger)
        } catch {
            logger.critical("coordinator failed: \(error)")
            throw ExitCode(ClusterDaemon.exitStatus(for: error))
        }
    }
}

extension ServeCommand {
    /// `overrides` with the gateway's limit flags set.
    private func gatewayLimitOverrides(_ overrides: ClusterOverrides) -> ClusterOverrides {
        var overrides = overrides
        overrides.gatewayHeaderTimeoutMilliseconds = gatewayHeaderTimeoutMs
        overrides.gatewayBodyTimeoutMilliseconds = gatewayBodyTimeoutMs
        overrides.gatewayIdleTimeoutMilliseconds = gatewayIdleTimeoutMs
        overrides.gatewayMaxConnections = gatewayMaxConnections
        overrides.gatewayAllowedOrigins = gatewayAllowedOrigins
        overrides.storeLeaseMilliseconds = storeLeaseMs
        overrides.sessionsSpreadLeaseMilliseconds = sessionsSpreadLeaseMs
        overrides.sessionsAdvertisedURL = sessionsAdvertisedURL
        return overrides
    }
}
