import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import Workflow
import WorkflowCluster
import WorkflowGateway
import WorkflowRemote

/// `WORKER`: hosts the children the coordinator places on it.
struct WorkerCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: ExecutableName.current(or: "workflow-worker"),
            abstract: "Joins a workflow cluster and hosts the remote children placed on it.",
            discussion: """
                Connects to coordinator.endpoint from the configuration file and announces its name, pool, \
                capacity and hostable workflow types. Hosts children until SIGTERM or SIGINT, then drains (the \
                coordinator moves its children to other workers, within drain.deadline_ms), tells the coordinator \
                it leaves and exits 0. A worker restarted under the same name takes its children \
                back. Settings are taken from the command line, then WORKFLOW_* environment variables, then the file.
                """,
            version: WorkflowClusterVersion.current)
    }

    @OptionGroup var daemon: DaemonOptions

    @Option(name: .long, help: ArgumentHelp("This worker's name, unique in the cluster; its pool and capacity come from the file's workers entry of that name. Overrides WORKFLOW_WORKER_NAME.", valueName: "name"))
    var name: String?

    @Option(name: .long, help: ArgumentHelp("The pool to announce, instead of the file's entry. Overrides WORKFLOW_WORKER_POOL.", valueName: "pool"))
    var pool: String?

    @Option(name: .long, help: ArgumentHelp("How long SIGTERM waits for this worker's children to move to other workers before it leaves anyway, in milliseconds (0: leave at once). Overrides drain.deadline_ms and WORKFLOW_DRAIN_DEADLINE_MS.", valueName: "ms"))
    var drainDeadlineMs: String?

    @Option(name: .long, help: ArgumentHelp("The coordinator endpoint to connect to. Overrides coordinator.endpoint and WORKFLOW_COORDINATOR_ENDPOINT.", valueName: "endpoint"))
    var endpoint: String?

    @Option(name: .long, help: ArgumentHelp("Serve this worker's metrics (GET /metrics) and liveness (GET /health/live) at host:port. Overrides WORKFLOW_WORKER_ADMIN_LISTEN. Off by default.", valueName: "host:port"))
    var adminListen: String?

    /// Runs the worker hosting `registry`, offering `protocolVersions` in HELLO (a test's worker
    /// of the next build offers a newer one too).
    func run(hosting registry: RemotableRegistry, protocolVersions: ClosedRange<Int> = RemoteProtocol.supported) async throws {
        let program = ExecutableName.current(or: "workflow-worker")
        let settings: ClusterSettings
        do {
            settings = try await ClusterSettings.load(
                file: daemon.config,
                overrides: ClusterOverrides(
                    logLevel: daemon.logLevel, logFormat: daemon.logFormat, coordinatorEndpoint: endpoint, workerName: name, workerPool: pool,
                    drainDeadlineMilliseconds: drainDeadlineMs))
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        guard let workerName = settings.workerName, !workerName.isEmpty else {
            ClusterDaemon.reportFatal(program, ValidationError("a worker name is required: --name NAME or WORKFLOW_WORKER_NAME"))
            throw ExitCode(64)
        }
        let adminAddress: GatewayAddress?
        do {
            let text = adminListen ?? ProcessInfo.processInfo.environment["WORKFLOW_WORKER_ADMIN_LISTEN"]
            adminAddress = try text.flatMap { text throws(ClusterConfigurationError) in
                try GatewayAddress.parsing(text, key: "admin_listen", source: "command line/environment")
            }
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        let entry: WorkerEntry
        do {
            entry = try settings.workerEntry(named: workerName)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        ClusterDaemon.setProcessLabel(workerName)
        let logger = Logger.cluster(label: "worker", node: workerName, settings: settings.configuration.log)
        var beside: [any Service] = []
        var hostedChildObservers: [any WorkflowObserver] = []
        if let adminAddress {
            // The daemon's entry point is the one place that bootstraps the process-global
            // metrics system; the worker's runtime and its hosted children record into it.
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            hostedChildObservers = [WorkflowMetricsObserver(root: workerName)]
            beside.append(
                WorkerAdminEndpoint.service(address: adminAddress, registry: registry, logger: logger) { address in
                    logger.info("admin listening", metadata: ["url": "http://\(address)"])
                })
        }
        var service: WorkerService
        do {
            // Key files are read now, before any socket: a bad key stops the worker at start.
            service = WorkerService(
                configuration: settings.configuration, worker: entry, registry: registry,
                security: try CurveKeyFiles.clientSecurity(settings.configuration, worker: workerName),
                hostedChildObservers: hostedChildObservers, logger: logger)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        service.protocolVersions = protocolVersions
        do {
            try await ClusterDaemon.run(
                service, beside: beside, gracefulShutdownBound: WorkerService.gracefulShutdownBound(for: settings.configuration), logger: logger)
        } catch where WorkerService.isNameTaken(error) {
            throw ExitCode(WorkerService.nameTakenExitCode)
        } catch {
            logger.critical("worker failed: \(error)")
            throw ExitCode(ClusterDaemon.exitStatus(for: error))
        }
    }
}
