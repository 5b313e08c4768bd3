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

    @Option(name: ClusterSetting.coordinatorEndpoint.optionName, help: ClusterSetting.coordinatorEndpoint.optionHelp)
    var endpoint: String?

    @Option(name: ClusterSetting.coordinatorRoot.optionName, help: ClusterSetting.coordinatorRoot.optionHelp)
    var root: String?

    @Option(name: .long, help: ArgumentHelp("Print each settled rendering of the root on standard output: none (default), text (a small screen) or json (one line per rendering or status change).", valueName: "mode"))
    var printRenderings: String = "none"

    @Option(name: ClusterSetting.snapshotFile.optionName, help: ClusterSetting.snapshotFile.optionHelp)
    var snapshotFile: String?

    @Option(name: ClusterSetting.snapshotInterval.optionName, help: ClusterSetting.snapshotInterval.optionHelp)
    var snapshotIntervalMs: String?

    @Option(name: .long, help: ArgumentHelp("Start the root from this snapshot file (written by --snapshot-file). A missing or corrupt file stops the coordinator (exit 78); omit --restore to start fresh.", valueName: "file"))
    var restore: String?

    @Option(name: ClusterSetting.storeKind.optionName, help: ClusterSetting.storeKind.optionHelp)
    var storeKind: String?

    @Option(name: ClusterSetting.storePath.optionName, help: ClusterSetting.storePath.optionHelp)
    var storePath: String?

    @Option(name: ClusterSetting.storeURL.optionName, help: ClusterSetting.storeURL.optionHelp)
    var storeURL: String?

    @Option(name: ClusterSetting.storeSync.optionName, help: ClusterSetting.storeSync.optionHelp)
    var storeSync: String?

    @Option(name: ClusterSetting.storeLease.optionName, help: ClusterSetting.storeLease.optionHelp)
    var storeLeaseMs: String?

    @Option(name: ClusterSetting.sessionsSpreadLease.optionName, help: ClusterSetting.sessionsSpreadLease.optionHelp)
    var sessionsSpreadLeaseMs: String?

    @Option(name: ClusterSetting.sessionsAdvertisedURL.optionName, help: ClusterSetting.sessionsAdvertisedURL.optionHelp)
    var sessionsAdvertisedURL: String?

    @Flag(name: .long, help: "Read events for the root from standard input, one JSON object per line: {\"token\": TOKEN, \"event\": EVENT}, TOKEN a sink token of a printed rendering; each line is answered on standard output.")
    var eventsFromStdin = false

    @Option(name: ClusterSetting.gatewayListen.optionName, help: ClusterSetting.gatewayListen.optionHelp)
    var gatewayListen: String?

    @Option(name: ClusterSetting.gatewayHeaderTimeout.optionName, help: ClusterSetting.gatewayHeaderTimeout.optionHelp)
    var gatewayHeaderTimeoutMs: String?

    @Option(name: ClusterSetting.gatewayBodyTimeout.optionName, help: ClusterSetting.gatewayBodyTimeout.optionHelp)
    var gatewayBodyTimeoutMs: String?

    @Option(name: ClusterSetting.gatewayIdleTimeout.optionName, help: ClusterSetting.gatewayIdleTimeout.optionHelp)
    var gatewayIdleTimeoutMs: String?

    @Option(name: ClusterSetting.gatewayMaxConnections.optionName, help: ClusterSetting.gatewayMaxConnections.optionHelp)
    var gatewayMaxConnections: String?

    @Option(name: ClusterSetting.gatewayAllowedOrigins.optionName, help: ClusterSetting.gatewayAllowedOrigins.optionHelp)
    var gatewayAllowedOrigins: String?

    @Flag(name: .long, help: "Print the names of the workers the configuration lists, one per line, and exit (used by scripts/cluster.sh).")
    var listWorkers = false

    @OptionGroup var application: Extension

    func validate() throws {
        guard RenderingPrintMode(rawValue: printRenderings) != nil else {
            throw ValidationError("--print-renderings must be one of none, text, json (got \(printRenderings))")
        }
    }

    func run(roots: RootWorkflowRegistry, webAssets: [WebAsset], storeSchema: StoreSchema = .thisRelease) async throws {
        let program = ExecutableName.current(or: "workflow-coordinator")
        var settings: ClusterSettings
        do {
            settings = try await ClusterSettings.load(file: daemon.config, overrides: overrides)
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
            try settings.checkRoot(in: roots)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        ClusterDaemon.setProcessLabel("coordinator")
        let logger = Logger.cluster(label: "coordinator", node: "coordinator", settings: settings.configuration.log)
        let configuration = settings.configuration
        // The guarantees in force, first: an operator reads what is durable and secure before
        // anything else happens.
        for line in ClusterGuarantees.lines(for: configuration) { logger.info("\(line)") }
        let service: CoordinatorService
        let tracing: DaemonTracing?
        do {
            // Read before any socket: a bad snapshot stops the coordinator at start.
            let restored = try restore.map(SnapshotFile.load)
            // Key files are read now, before any socket: a bad key stops the coordinator at start.
            var options = CoordinatorOptions(printMode: RenderingPrintMode(rawValue: printRenderings) ?? .none, restoredSnapshot: restored)
            if eventsFromStdin { options.companions.append(StandardInputEvents()) }
            tracing = try DaemonTracing.make(configuration.tracing, serviceName: "workflow-coordinator", instance: "coordinator", logger: logger)
            options.tracer = tracing?.tracer
            if let address = configuration.gateway.listen {
                // The daemon's entry point is the one place that bootstraps the process-global
                // metrics system; the runtime and the gateway record into it, /metrics reads it.
                let registry = PrometheusCollectorRegistry()
                MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
                let gateway = ClusterGateway(
                    options: GatewayOptions(
                        address: address, bearerToken: try configuration.gateway.loadBearerToken(), assets: webAssets,
                        metricsRegistry: registry, limits: configuration.gateway.limits, allowedOrigins: configuration.gateway.allowedOrigins,
                        stream: configuration.gateway.stream))
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
                // taken when it is created or asked for. The lease term is renewed on a
                // connection and event loop thread of its own, never queued behind checkpoints.
                let store = try await PostgresCoordinatorStore.open(
                    url: url, leaseConnection: true, fencesSessionsByLease: true, maxCommitBatch: configuration.store.maxCommitBatch, schema: storeSchema, holder: holder,
                    logger: logger)
                // Unique across hosts and restarts: a restarted coordinator owns none of its
                // predecessor's sessions until it takes them over like any other.
                let incarnation = String(UInt64.random(in: 0...UInt64.max), radix: 16)
                options.sessionSpread = SessionSpread(store: store, holder: "\(holder) (\(incarnation))", settings: spread)
            } else             if let lease = configuration.store.lease, let url = configuration.store.url {
                // A standby first: the store is reached now (a wrong URL or an unreachable
                // database stops the coordinator at start), the lease taken when it runs out.
                let store = try await PostgresCoordinatorStore.open(
                    url: url, leaseConnection: true, maxCommitBatch: configuration.store.maxCommitBatch, schema: storeSchema, holder: holder,
                    logger: logger)
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
                options.store = try await OpenedCoordinatorStore.open(configuration.store, holder: holder, schema: storeSchema, logger: logger)
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
            try await ClusterDaemon.run(service, beside: tracing.map { [$0.service] } ?? [], logger: logger)
        } catch {
            logger.critical("coordinator failed: \(error)")
            throw ExitCode(ClusterDaemon.exitStatus(for: error))
        }
    }
}

extension ServeCommand {
    /// The settings typed on the command line, by declaration.
    private var overrides: ClusterOverrides {
        ClusterOverrides([
            .logLevel: daemon.logLevel, .logFormat: daemon.logFormat, .coordinatorEndpoint: endpoint, .coordinatorRoot: root,
            .tracingOTLPEndpoint: daemon.tracingOTLPEndpoint, .tracingOTLPProtocol: daemon.tracingOTLPProtocol,
            .snapshotFile: snapshotFile, .snapshotInterval: snapshotIntervalMs, .storeKind: storeKind, .storePath: storePath, .storeURL: storeURL,
            .storeSync: storeSync, .storeLease: storeLeaseMs, .sessionsSpreadLease: sessionsSpreadLeaseMs,
            .sessionsAdvertisedURL: sessionsAdvertisedURL, .gatewayListen: gatewayListen, .gatewayHeaderTimeout: gatewayHeaderTimeoutMs,
            .gatewayBodyTimeout: gatewayBodyTimeoutMs, .gatewayIdleTimeout: gatewayIdleTimeoutMs, .gatewayMaxConnections: gatewayMaxConnections,
            .gatewayAllowedOrigins: gatewayAllowedOrigins,
        ])
    }
}
