import Foundation
import Logging
import ServiceLifecycle
import WorkflowRemote

/// The coordinator daemon: hosts the configured root workflow on a runtime that listens for
/// workers, until graceful shutdown (SIGTERM/SIGINT) or the end of a scripted demo.
///
/// A `Service` so that swift-service-lifecycle owns signals and shutdown ordering: on a signal it
/// stops the root (remote children get STOP), shuts the runtime down (closing its sockets) and
/// returns, and the process exits 0.
public struct CoordinatorService: Service {
    /// The effective configuration.
    public let configuration: ClusterConfiguration
    /// Printing and demo options.
    public let options: CoordinatorOptions
    /// The roots it can host.
    public let roots: RootWorkflowRegistry
    /// Where it logs.
    public let logger: Logger
    /// Its listener's transport security, resolved from the key files at start (`CurveKeyFiles`).
    public let security: ServerSecurity

    /// Creates the service; nothing starts until `run()`.
    public init(
        configuration: ClusterConfiguration, options: CoordinatorOptions, roots: RootWorkflowRegistry = .standard,
        security: ServerSecurity = .plaintext, logger: Logger
    ) {
        self.security = security
        self.configuration = configuration
        self.options = options
        self.roots = roots
        self.logger = logger
    }

    /// Why the coordinator could not do its job.
    public enum Failure: Error, CustomStringConvertible {
        /// `coordinator.root` names no registered root.
        case unknownRoot(String, known: [String])
        /// A demo step did not complete within its timeout.
        case demoStalled(String)

        /// A one-line explanation for the log.
        public var description: String {
            switch self {
            case .unknownRoot(let name, let known): "unknown root workflow \"\(name)\" (known: \(known.joined(separator: ", ")))"
            case .demoStalled(let step): "the demo stalled: \(step)"
            }
        }
    }

    /// Binds, hosts the root and serves until graceful shutdown or the demo's end; then stops
    /// the root and the runtime. Throws if the endpoint cannot be bound, the root is unknown or
    /// the demo stalled.
    public func run() async throws {
        guard let factory = roots.factory(named: configuration.root) else {
            throw Failure.unknownRoot(configuration.root, known: roots.names)
        }
        var runtimeConfiguration = RemoteRuntimeConfiguration(name: "coordinator", logger: logger)
        runtimeConfiguration.listenEndpoint = configuration.coordinatorEndpoint
        runtimeConfiguration.placementTable = configuration.placement
        runtimeConfiguration.requestTimeout = configuration.requestDeadline
        runtimeConfiguration.heartbeatInterval = configuration.heartbeatInterval
        runtimeConfiguration.heartbeatLiveness = configuration.heartbeatLiveness
        runtimeConfiguration.listenSecurity = security
        runtimeConfiguration.allowPlaintextOnNetwork = configuration.security.allowPlaintextOnNetwork
        let runtime = try RemoteRuntime(configuration: runtimeConfiguration)
        let endpoint = runtime.listenEndpoint ?? configuration.coordinatorEndpoint
        logger.info(
            "coordinator listening",
            metadata: ["endpoint": "\(endpoint)", "root": "\(configuration.root)", "security": security == .plaintext ? "plaintext" : "curve"])
        if options.printMode == .json { StandardOutput.json(["event": "listening", "endpoint": endpoint]) }
        if !options.demoSelections.isEmpty, !configuration.workers.isEmpty {
            // The demo shows the tree across processes: start the root once the workers are in,
            // so its first screen is already the split one (bounded: a missing worker is a stall).
            let count = configuration.workers.count
            logger.info("demo: waiting for \(count) workers")
            let timeout = options.demoStepTimeout
            let joined = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    await runtime.waitForWorkers(count: count)
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return false
                }
                group.addTask {
                    // A signal while waiting: stop cleanly (nil).
                    do { try await gracefulShutdown() } catch { return false }
                    return nil
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            switch joined {
            case true?: break
            case false?:
                await runtime.shutdown()
                throw Failure.demoStalled("fewer than \(count) workers joined in time")
            case nil:
                logger.notice("demo interrupted by a signal")
                await runtime.shutdown()
                return
            }
        }
        // Subscribe before the root starts so its children's first statuses are reported too.
        let statusChanges = runtime.statusChanges
        if options.restoredSnapshot != nil { logger.notice("restoring the root from a snapshot") }
        let session = factory(runtime, options.restoredSnapshot)

        let demoResult = await withTaskGroup(of: Void.self) { group -> Result<Void, Failure>? in
            group.addTask { await reportStatuses(statusChanges) }
            if let file = configuration.snapshotFile {
                let interval = configuration.snapshotInterval
                group.addTask {
                    while (try? await Task.sleep(for: interval)) != nil {
                        await writeSnapshot(of: session, to: file, level: .debug)
                    }
                }
            }
            defer { group.cancelAll() }
            if !options.demoSelections.isEmpty {
                // The demo prints its own frames and ends the service when done (unless asked to
                // keep serving).
                let result = await runDemo(session)
                guard case .success = result, options.serveAfterDemo else { return result }
            }
            group.addTask { await printFrames(of: session) }
            // Serve until SIGTERM/SIGINT (the service group's graceful shutdown).
            try? await gracefulShutdown()
            return nil
        }
        logger.info("coordinator stopping")
        // The last state before the tree stops: a SIGTERMed coordinator loses nothing.
        if let file = configuration.snapshotFile { await writeSnapshot(of: session, to: file, level: .info) }
        await session.stop()
        await runtime.shutdown()
        logger.info("coordinator stopped")
        if case .failure(let failure) = demoResult { throw failure }
    }

    /// Writes the root's tree snapshot to `file` atomically; a failure is logged (serving goes
    /// on: the previous snapshot file is left intact).
    private func writeSnapshot(of session: any ClusterRootSession, to file: String, level: Logger.Level) async {
        let snapshot = await session.snapshot()
        do {
            try SnapshotFile.write(snapshot, to: file)
            logger.log(level: level, "snapshot written", metadata: ["file": "\(file)"])
        } catch {
            logger.error("snapshot not written: \(error)")
        }
    }

    /// Prints frames as the print mode says; text mode skips a frame equal to the previous one
    /// (JSON mode prints every settled rendering: readers may wait for one after an event).
    private func printFrames(of session: any ClusterRootSession) async {
        guard options.printMode != .none else { return }
        var previous: RenderedFrame?
        await session.forEachFrame { frame in
            if frame != previous || options.printMode == .json { print(frame) }
            previous = frame
            return !Task.isCancelled
        }
    }

    private func print(_ frame: RenderedFrame) {
        switch options.printMode {
        case .none: break
        case .text: StandardOutput.line(frame.text)
        case .json: StandardOutput.line(frame.json)
        }
    }

    /// Logs and prints every change of a remote child's status (typed: starting, running,
    /// unavailable with the reason).
    private func reportStatuses(_ changes: AsyncStream<RemoteChildStatusChange>) async {
        for await change in changes {
            let (state, detail): (String, String) =
                switch change.status {
                case .starting: ("starting", "")
                case .running(let worker): ("running", worker)
                case .unavailable(let error): ("unavailable", error.description)
                }
            logger.info("child status: \(change.status)", metadata: ["path": "\(change.path)", "status": "\(state)"])
            switch options.printMode {
            case .none: break
            case .text: StandardOutput.line("status \(change.path): \(change.status)")
            case .json: StandardOutput.json(["event": "status", "path": change.path, "status": state, "detail": detail])
            }
        }
    }

    /// How a scripted demo ended.
    private enum DemoEnd: Sendable {
        /// Every selection was rendered.
        case finished
        /// A step outlasted its timeout (or the root stopped rendering).
        case stalled
        /// A signal asked the coordinator to stop first (a clean stop, not a failure).
        case interrupted
    }

    /// Waits for a complete frame, then selects each id in turn, waiting for the frame that
    /// shows it, printing every step; fails if the demo outlasts its step timeouts. A signal
    /// ends it early, cleanly.
    private func runDemo(_ session: any ClusterRootSession) async -> Result<Void, Failure> {
        let timeout = options.demoStepTimeout
        let end = await withTaskGroup(of: DemoEnd.self) { group in
            group.addTask {
                var pending = options.demoSelections[...]
                var awaited: Int?
                var previous: RenderedFrame?
                var finished = false
                await session.forEachFrame { frame in
                    if frame != previous || options.printMode == .json { print(frame) }
                    previous = frame
                    guard frame.isComplete, awaited == nil || frame.selection == awaited else { return true }
                    guard let next = pending.popFirst() else {
                        finished = true
                        return false
                    }
                    awaited = next
                    if options.printMode == .text { StandardOutput.line("demo: selecting message \(next)") }
                    logger.info("demo: selecting message \(next)")
                    if !session.select(next) { logger.error("demo: message \(next) is not in the inbox") }
                    return true
                }
                return finished ? .finished : .stalled
            }
            group.addTask {
                try? await Task.sleep(for: timeout * max(1, options.demoSelections.count + 1))
                return .stalled
            }
            group.addTask {
                // Task-local: the service group's graceful shutdown reaches child tasks too.
                do {
                    try await gracefulShutdown()
                    return .interrupted
                } catch {
                    return .stalled
                }
            }
            let first = await group.next() ?? .stalled
            group.cancelAll()
            return first
        }
        switch end {
        case .finished: return .success(())
        case .interrupted:
            logger.notice("demo interrupted by a signal")
            return .success(())
        case .stalled: return .failure(.demoStalled("not every selection was rendered by the workers in time"))
        }
    }
}
