import Foundation
import Logging
import ServiceLifecycle
import WorkflowRemote

/// The coordinator daemon: hosts the configured root workflow on a runtime that listens for
/// workers, with its companions beside it, until graceful shutdown (SIGTERM/SIGINT) or until a
/// companion says the run is over.
///
/// A `Service` so that swift-service-lifecycle owns signals and shutdown ordering: on a signal it
/// stops the root (remote children get STOP), shuts the runtime down (closing its sockets) and
/// returns, and the process exits 0.
package struct CoordinatorService: Service {
    /// The effective configuration.
    package let configuration: ClusterConfiguration
    /// Printing options and companions.
    package let options: CoordinatorOptions
    /// The roots it can host.
    package let roots: RootWorkflowRegistry
    /// Where it logs.
    package let logger: Logger
    /// Its listener's transport security, resolved from the key files at start (`CurveKeyFiles`).
    package let security: ServerSecurity

    /// Creates the service; nothing starts until `run()`.
    package init(
        configuration: ClusterConfiguration, options: CoordinatorOptions, roots: RootWorkflowRegistry,
        security: ServerSecurity = .plaintext, logger: Logger
    ) {
        self.security = security
        self.configuration = configuration
        self.options = options
        self.roots = roots
        self.logger = logger
    }

    /// What ended one task of the serving group.
    private enum Outcome: Sendable {
        /// A background task (statuses, snapshots, frames) ended: nothing to decide.
        case background
        /// A signal asked for a graceful shutdown.
        case shutdown
        /// A companion returned.
        case companionEnded(RootCompanionEnd, printedFrames: Bool)
        /// A companion failed.
        case companionFailed(String)
    }

    /// Binds, prepares the companions, hosts the root and serves until graceful shutdown or a
    /// companion's end; then stops the root and the runtime. Throws if the endpoint cannot be
    /// bound, the root is unknown (`RootWorkflowRegistry.SelectionError`) or a companion failed.
    ///
    /// With a lease (`options.leadership`) it is a standby first: its standby companions serve
    /// (the gateway answering 503 `standby`) while it asks for the lease, and it binds nothing
    /// until it holds it; then it resumes the root from the store's latest checkpoint with the
    /// lease's fencing token and serves, renewing the lease, until it must step down
    /// (`CoordinatorLeadership.onStepDown`) or stops, giving the lease up.
    package func run() async throws {
        if let leadership = options.leadership {
            try await lead(leadership)
            return
        }
        // The store is closed whichever way serving ends (also when binding or a companion fails).
        do {
            try await serve(store: options.store)
        } catch {
            await options.store?.store.close()
            await options.sessionSpread?.store.close()
            throw error
        }
        await options.store?.store.close()
        await options.sessionSpread?.store.close()
    }

    /// A standby until it holds the lease, then the leader until it stops; the store is closed
    /// whichever way this ends, and a lease still held is given up first.
    private func lead(_ leadership: CoordinatorLeadership) async throws {
        do {
            guard let lease = try await standby(leadership) else {
                await leadership.store.close()
                return
            }
            // Renewing from the moment it is taken: resuming the root may take longer than the lease.
            let keeper = Task { await leadership.keep(lease) }
            let served: Result<Void, any Error>
            do {
                let opened = try await OpenedCoordinatorStore.resume(leadership.store, token: lease.token, name: leadership.storeName)
                try await serve(store: opened)
                served = .success(())
            } catch {
                served = .failure(error)
            }
            keeper.cancel()
            if case .stopped(let held) = await keeper.value { await leadership.release(held) }
            try served.get()
        } catch {
            await leadership.store.close()
            throw error
        }
        await leadership.store.close()
    }

    /// What ended one task of the standby group.
    private enum StandbyOutcome: Sendable {
        case leading(CoordinatorLease)
        case shutdown
        case companionEnded
    }

    /// Serves the standby companions while asking for the lease; returns the lease, or `nil` if
    /// a signal came first.
    private func standby(_ leadership: CoordinatorLeadership) async throws -> CoordinatorLease? {
        let context = CoordinatorContext(configuration: configuration, logger: logger, console: CoordinatorConsole(printMode: options.printMode))
        logger.notice("standby: waiting for the lease on the store", metadata: ["store": "\(leadership.storeName)", "holder": "\(leadership.holder)"])
        context.console.event(["event": "standby"])
        let lease = try await withThrowingTaskGroup(of: StandbyOutcome.self) { group -> CoordinatorLease? in
            group.addTask { .leading(try await leadership.acquire()) }
            group.addTask {
                try? await gracefulShutdown()
                return .shutdown
            }
            for companion in options.standbyCompanions {
                group.addTask {
                    try await companion.serveStandby(context: context)
                    return .companionEnded
                }
            }
            defer { group.cancelAll() }
            while let outcome = try await group.next() {
                switch outcome {
                case .leading(let lease): return lease
                case .shutdown: return nil
                case .companionEnded: continue
                }
            }
            return nil
        }
        if let lease { context.console.event(["event": "leading", "token": "\(lease.token)"]) }
        return lease
    }

    private func serve(store: OpenedCoordinatorStore?) async throws {
        let (rootName, factory) = try roots.root(configured: configuration.root)
        var runtimeConfiguration = RemoteRuntimeConfiguration(name: "coordinator", logger: logger)
        runtimeConfiguration.listenEndpoint = configuration.coordinatorEndpoint
        runtimeConfiguration.placementTable = configuration.placement
        runtimeConfiguration.poolMembers = Dictionary(grouping: configuration.workers, by: \.pool).mapValues { $0.map(\.name) }
        runtimeConfiguration.placementGrace = configuration.placementGrace
        runtimeConfiguration.rebalancing = configuration.rebalancing
        runtimeConfiguration.requestTimeout = configuration.requestDeadline
        runtimeConfiguration.heartbeatInterval = configuration.heartbeatInterval
        runtimeConfiguration.heartbeatLiveness = configuration.heartbeatLiveness
        runtimeConfiguration.listenSecurity = security
        runtimeConfiguration.allowPlaintextOnNetwork = configuration.security.allowPlaintextOnNetwork
        runtimeConfiguration.metricsFactory = options.metricsFactory
        runtimeConfiguration.tracer = options.tracer
        let runtime = try RemoteRuntime(configuration: runtimeConfiguration)
        let endpoint = runtime.listenEndpoint ?? configuration.coordinatorEndpoint
        logger.info(
            "coordinator listening",
            metadata: ["endpoint": "\(endpoint)", "root": "\(rootName)", "security": security == .plaintext ? "plaintext" : "curve"])
        // One metrics observer per registered root, shared by its sessions.
        let sessionObservers = Dictionary(
            uniqueKeysWithValues: roots.names.map { ($0, WorkflowMetricsObserver(root: $0, factory: options.metricsFactory)) })
        // Spread, the sessions' store is the shared one, each session fenced by its own lease,
        // and the shared root has none (`store` is nil).
        let spread = options.sessionSpread
        let sessions = configuration.sessions.map { settings in
            // With a store, every session is committed to it, and those it holds resume.
            SessionDirectory(
                registry: roots, runtime: runtime, settings: settings, logger: logger, store: store, spread: spread,
                metricsFactory: options.metricsFactory, observers: { root in sessionObservers[root].map { [$0] } ?? [] })
        }
        if let spread {
            logger.notice(
                "sessions spread over the coordinators sharing the store: this one serves those it owns; the shared root is its own, in memory",
                metadata: ["advertised": "\(spread.settings.advertisedURL)", "lease-ms": "\(spread.settings.lease / .milliseconds(1))"])
        }
        if sessions == nil, let stored = store?.sessions.count, stored > 0 {
            logger.notice("the store holds sessions, and sessions are not enabled here: they are kept as they are", metadata: ["sessions": "\(stored)"])
        }
        let context = CoordinatorContext(
            configuration: configuration, logger: logger, console: CoordinatorConsole(printMode: options.printMode), sessions: sessions)
        context.console.event(["event": "listening", "endpoint": endpoint])

        do {
            guard try await prepareCompanions(runtime: runtime, context: context) else {
                logger.notice("stopped by a signal before the root started")
                await runtime.shutdown()
                return
            }
        } catch {
            await runtime.shutdown()
            throw error
        }
        // Subscribe before the root starts so its children's first statuses are printed too; not
        // at all when nothing is printed (every child's every status would wake a task for nothing).
        let statusChanges = options.printMode == .none ? nil : runtime.statusChanges
        var start = RootStart(
            runtime: runtime, snapshot: options.restoredSnapshot, logger: logger,
            observers: [WorkflowMetricsObserver(root: rootName, factory: options.metricsFactory)])
        if let opened = store {
            start.durability = CheckpointCommitter(
                store: opened.store, token: opened.token, restored: opened.checkpoint, logger: logger, tracer: runtime.tracer)
            if let checkpoint = opened.checkpoint {
                start.snapshot = opened.snapshot
                logger.notice(
                    "resuming the root from the store's checkpoint",
                    metadata: ["checkpoint": "\(checkpoint.number)", "accepted-events": "\(checkpoint.acceptedEvents)"])
            }
        }
        if start.snapshot != nil && store?.checkpoint == nil { logger.notice("restoring the root from a snapshot") }
        let session = factory(start)

        let failure = await serve(session, statusChanges: statusChanges, context: context)
        logger.info("coordinator stopping")
        // The last state before the tree stops: a SIGTERMed coordinator loses nothing.
        if let file = configuration.snapshotFile { await writeSnapshot(of: session, to: file, level: .info) }
        let retired = await sessions?.stopAll()
        await session.stop()
        await runtime.shutdown()
        // After the runtime: their teardown then sends nothing, and the shutdown does not wait for it.
        retired?.releaseInBackground()
        logger.info("coordinator stopped")
        if let failure { throw CompanionFailure(description: failure) }
    }

    /// A companion's failure, as the coordinator reports it.
    package struct CompanionFailure: Error, CustomStringConvertible {
        /// What the companion said.
        package var description: String
    }

    /// Prepares every companion, racing a signal. Returns `false` if a signal came first.
    private func prepareCompanions(runtime: RemoteRuntime, context: CoordinatorContext) async throws -> Bool {
        guard !options.companions.isEmpty else { return true }
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for companion in options.companions { try await companion.prepare(runtime: runtime, context: context) }
                return true
            }
            group.addTask {
                // Task-local: the service group's graceful shutdown reaches child tasks too.
                try await gracefulShutdown()
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }

    /// Runs statuses, snapshots, frames and companions until a signal or a companion's end.
    /// Returns a companion's failure, if one failed.
    private func serve(
        _ session: any ClusterRootSession, statusChanges: AsyncStream<RemoteChildStatusChange>?, context: CoordinatorContext
    ) async -> String? {
        await withTaskGroup(of: Outcome.self) { group -> String? in
            if let statusChanges {
                group.addTask {
                    await printStatuses(statusChanges)
                    return .background
                }
            }
            if let sessions = context.sessions {
                group.addTask {
                    await sessions.run()
                    return .background
                }
            }
            if let file = configuration.snapshotFile {
                let interval = configuration.snapshotInterval
                group.addTask {
                    while (try? await Task.sleep(for: interval)) != nil {
                        await writeSnapshot(of: session, to: file, level: .debug)
                    }
                    return .background
                }
            }
            var framePrinters = 0
            for companion in options.companions {
                if companion.printsFrames { framePrinters += 1 }
                group.addTask {
                    do {
                        return .companionEnded(try await companion.run(session: session, context: context), printedFrames: companion.printsFrames)
                    } catch {
                        return .companionFailed("\(error)")
                    }
                }
            }
            if framePrinters == 0 {
                group.addTask {
                    await printFrames(of: session, console: context.console)
                    return .background
                }
            }
            group.addTask {
                // Serve until SIGTERM/SIGINT (the service group's graceful shutdown).
                try? await gracefulShutdown()
                return .shutdown
            }
            defer { group.cancelAll() }
            while let outcome = await group.next() {
                switch outcome {
                case .background: continue
                case .shutdown: return nil
                case .companionFailed(let failure):
                    logger.error("a companion of the root failed: \(failure)")
                    return failure
                case .companionEnded(.stopCoordinator, _): return nil
                case .companionEnded(.keepServing, let printedFrames):
                    guard printedFrames else { continue }
                    framePrinters -= 1
                    if framePrinters == 0 {
                        group.addTask {
                            await printFrames(of: session, console: context.console)
                            return .background
                        }
                    }
                }
            }
            return nil
        }
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
    private func printFrames(of session: any ClusterRootSession, console: CoordinatorConsole) async {
        guard console.printMode != .none else { return }
        var previous: RenderedFrame?
        await session.forEachFrame { frame in
            if frame != previous || console.printMode == .json { console.print(frame) }
            previous = frame
            return !Task.isCancelled
        }
    }

    /// Prints every change of a remote child's status (typed: starting, reconnecting, running,
    /// unavailable with the reason).
    private func printStatuses(_ changes: AsyncStream<RemoteChildStatusChange>) async {
        for await change in changes {
            let (state, detail): (String, String) =
                switch change.status {
                case .starting: ("starting", "")
                case .reconnecting: ("reconnecting", "showing its last rendering")
                case .running(let worker): ("running", worker)
                case .unavailable(let error): ("unavailable", error.description)
                }
            // Logged once, by the runtime (`child status: …`, at info or warning); printed here.
            switch options.printMode {
            case .none: break
            case .text: StandardOutput.line("status \(change.path): \(change.status)")
            case .json: StandardOutput.json(["event": "status", "path": change.path, "status": state, "detail": detail])
            }
        }
    }
}
