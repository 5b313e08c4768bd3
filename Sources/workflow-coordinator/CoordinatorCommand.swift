import ArgumentParser
import Foundation
import Logging
import WorkflowCluster

/// `workflow-coordinator`: hosts the cluster's root workflow (`serve`, the default) or writes
/// the cluster's CURVE keys (`keygen`).
@main
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workflow-coordinator",
        abstract: "Hosts a root workflow whose children run on workflow-worker processes.",
        subcommands: [ServeCommand.self, KeygenCommand.self],
        defaultSubcommand: ServeCommand.self)
}

/// `workflow-coordinator [serve]`: hosts the cluster's root workflow and places its children on
/// workers.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Hosts a root workflow whose children run on workflow-worker processes (the default).",
        discussion: """
            Binds the cluster endpoint from the configuration file, hosts the root workflow named by \
            coordinator.root and places its remote children as the file's placement table says. Serves \
            until SIGTERM or SIGINT, then stops the tree and exits 0. Settings are taken from the command \
            line, then WORKFLOW_* environment variables, then the file. Logs go to standard error; \
            renderings (--print-renderings) to standard output.
            """)

    @Option(name: .long, help: ArgumentHelp("The cluster configuration file (JSON).", valueName: "file"))
    var config: String

    @Option(name: .long, help: ArgumentHelp("The lowest log level: trace, debug, info, notice, warning, error, critical. Overrides log.level and WORKFLOW_LOG_LEVEL.", valueName: "level"))
    var logLevel: String?

    @Option(name: .long, help: ArgumentHelp("Log line format: text (default) or json. Overrides log.format and WORKFLOW_LOG_FORMAT.", valueName: "format"))
    var logFormat: String?

    @Option(name: .long, help: ArgumentHelp("The endpoint to bind (tcp://host:port or ipc://path). Overrides coordinator.endpoint and WORKFLOW_COORDINATOR_ENDPOINT.", valueName: "endpoint"))
    var endpoint: String?

    @Option(name: .long, help: ArgumentHelp("The root workflow to host, by name (email-browser). Overrides coordinator.root and WORKFLOW_COORDINATOR_ROOT.", valueName: "name"))
    var root: String?

    @Option(name: .long, help: ArgumentHelp("Print each settled rendering of the root on standard output: none (default), text (a small screen naming the process that rendered each pane) or json (one line per rendering or status change).", valueName: "mode"))
    var printRenderings: String = "none"

    @Option(name: .long, help: ArgumentHelp("Scripted demo: select these message ids in order through the inbox, print each settled rendering, then exit 0 (e.g. 3,1,4). Prints as text unless --print-renderings json.", valueName: "ids"))
    var demoSelections: String?

    @Flag(name: .long, help: "With --demo-selections: after the last selection keep serving until SIGTERM/SIGINT instead of exiting.")
    var serveAfterDemo = false

    @Option(name: .long, help: ArgumentHelp("Write the root's tree snapshot to this file (atomically) every --snapshot-interval-ms and on SIGTERM. Overrides snapshot.file.", valueName: "file"))
    var snapshotFile: String?

    @Option(name: .long, help: ArgumentHelp("How often to write the snapshot, in milliseconds (default 1000). Overrides snapshot.interval_ms.", valueName: "ms"))
    var snapshotIntervalMs: Int?

    @Option(name: .long, help: ArgumentHelp("Start the root from this snapshot file (written by --snapshot-file). A missing or corrupt file stops the coordinator (exit 78); omit --restore to start fresh.", valueName: "file"))
    var restore: String?

    @Flag(name: .long, help: "Print the names of the workers the configuration lists, one per line, and exit (used by scripts/cluster.sh).")
    var listWorkers = false

    func validate() throws {
        guard RenderingPrintMode(rawValue: printRenderings) != nil else {
            throw ValidationError("--print-renderings must be one of none, text, json (got \(printRenderings))")
        }
        if let snapshotIntervalMs, snapshotIntervalMs <= 0 {
            throw ValidationError("--snapshot-interval-ms must be a positive integer (got \(snapshotIntervalMs))")
        }
        if let demoSelections, parsedSelections(demoSelections) == nil {
            throw ValidationError("--demo-selections must be comma-separated integers (got \(demoSelections))")
        }
    }

    private func parsedSelections(_ text: String) -> [Int]? {
        let ids = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !ids.isEmpty, ids.allSatisfy({ $0 != nil }) else { return nil }
        return ids.compactMap { $0 }
    }

    func run() async throws {
        let settings: ClusterSettings
        do {
            settings = try await ClusterSettings.load(
                file: config,
                overrides: ClusterOverrides(logLevel: logLevel, logFormat: logFormat, coordinatorEndpoint: endpoint, root: root))
        } catch {
            ClusterDaemon.reportFatal("workflow-coordinator", error)
            throw ExitCode(78)
        }
        if listWorkers {
            for worker in settings.configuration.workers { print(worker.name) }
            return
        }
        ClusterDaemon.setProcessLabel("coordinator")
        let logger = Logger.cluster(label: "coordinator", node: "coordinator", settings: settings.configuration.log)
        var printMode = RenderingPrintMode(rawValue: printRenderings) ?? .none
        let selections = demoSelections.flatMap(parsedSelections) ?? []
        if !selections.isEmpty && printMode == .none { printMode = .text }
        var configuration = settings.configuration
        if let snapshotFile { configuration.snapshotFile = snapshotFile }
        if let snapshotIntervalMs { configuration.snapshotInterval = .milliseconds(snapshotIntervalMs) }
        let service: CoordinatorService
        do {
            // Read before any socket: a bad snapshot stops the coordinator at start.
            let restored = try restore.map(SnapshotFile.load)
            // Key files are read now, before any socket: a bad key stops the coordinator at start.
            service = CoordinatorService(
                configuration: configuration,
                options: CoordinatorOptions(
                    printMode: printMode, demoSelections: selections, serveAfterDemo: serveAfterDemo, restoredSnapshot: restored),
                security: try CurveKeyFiles.serverSecurity(settings.configuration), logger: logger)
        } catch {
            ClusterDaemon.reportFatal("workflow-coordinator", error)
            throw ExitCode(78)
        }
        do {
            try await ClusterDaemon.run(service, logger: logger)
        } catch {
            logger.critical("coordinator failed: \(error)")
            throw ExitCode.failure
        }
    }
}
