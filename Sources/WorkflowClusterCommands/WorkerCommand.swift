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

    @Option(name: ClusterSetting.workerName.optionName, help: ClusterSetting.workerName.optionHelp)
    var name: String?

    @Option(name: ClusterSetting.workerPool.optionName, help: ClusterSetting.workerPool.optionHelp)
    var pool: String?

    @Option(name: ClusterSetting.drainDeadline.optionName, help: ClusterSetting.drainDeadline.optionHelp)
    var drainDeadlineMs: String?

    @Option(name: ClusterSetting.coordinatorEndpoint.optionName, help: ClusterSetting.coordinatorEndpoint.optionHelp)
    var endpoint: String?

    @Option(name: ClusterSetting.workerAdminListen.optionName, help: ClusterSetting.workerAdminListen.optionHelp)
    var adminListen: String?

    /// Runs the worker hosting `registry`, offering `protocolVersions` in HELLO (a test's worker
    /// of the next build offers a newer one too).
    func run(hosting registry: RemotableRegistry, protocolVersions: ClosedRange<Int> = RemoteProtocol.supported) async throws {
        let program = ExecutableName.current(or: "workflow-worker")
        let settings: ClusterSettings
        do {
            settings = try await ClusterSettings.load(
                file: daemon.config,
                overrides: ClusterOverrides([
                    .logLevel: daemon.logLevel, .logFormat: daemon.logFormat, .coordinatorEndpoint: endpoint, .workerName: name, .workerPool: pool,
                    .drainDeadline: drainDeadlineMs, .workerAdminListen: adminListen,
                    .tracingOTLPEndpoint: daemon.tracingOTLPEndpoint, .tracingOTLPProtocol: daemon.tracingOTLPProtocol,
                ]))
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        guard let workerName = settings.workerName, !workerName.isEmpty else {
            ClusterDaemon.reportFatal(program, ValidationError("a worker name is required: \(ClusterSetting.workerName.flag ?? "") NAME or \(ClusterSetting.workerName.environment ?? "")"))
            throw ExitCode(64)
        }
        let adminAddress = settings.workerAdminListen
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
        let tracing: DaemonTracing?
        do {
            tracing = try DaemonTracing.make(settings.configuration.tracing, serviceName: "workflow-worker", instance: workerName, logger: logger)
        } catch {
            ClusterDaemon.reportFatal(program, error)
            throw ExitCode(78)
        }
        if let tracing { beside.append(tracing.service) }
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
        service.tracer = tracing?.tracer
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
