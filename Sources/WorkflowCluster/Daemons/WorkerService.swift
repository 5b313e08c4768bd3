import Foundation
import Logging
import ServiceLifecycle
import Tracing
import Workflow
import WorkflowRemote

/// The worker daemon: connects to the coordinator, announces itself (name, pool, hostable types,
/// capacity, protocol version — all in the runtime's HELLO) and hosts the children placed on it
/// until graceful shutdown. Then it drains (the coordinator moves its children, with their latest
/// state, to other workers; at most `drainDeadline`), tells the coordinator it leaves (GOODBYE)
/// and exits.
package struct WorkerService: Service {
    /// The effective configuration.
    package let configuration: ClusterConfiguration
    /// This worker's entry (name, pool, capacity).
    package let worker: WorkerEntry
    /// The types it can host.
    package let registry: RemotableRegistry
    /// Where it logs.
    package let logger: Logger
    /// Its transport security, resolved from the key files at start (`CurveKeyFiles`).
    package let security: ClientSecurity
    /// Observers of every child it hosts (`RemoteRuntimeConfiguration.hostedChildObservers`).
    package let hostedChildObservers: [any WorkflowObserver]
    /// Where the worker's spans go (`tracing.otlp_endpoint`); `nil`: tracing is off.
    package var tracer: (any Tracer)?
    /// The remote protocol versions it offers in HELLO (`RemoteRuntimeConfiguration.protocolVersions`):
    /// this build's, unless a test plays a worker of another build.
    package var protocolVersions: ClosedRange<Int> = RemoteProtocol.supported

    /// Creates the service; nothing connects until `run()`.
    package init(
        configuration: ClusterConfiguration, worker: WorkerEntry, registry: RemotableRegistry,
        security: ClientSecurity = .plaintext, hostedChildObservers: [any WorkflowObserver] = [], logger: Logger
    ) {
        self.security = security
        self.hostedChildObservers = hostedChildObservers
        self.configuration = configuration
        self.worker = worker
        self.registry = registry
        self.logger = logger
    }

    /// Connects and hosts children until graceful shutdown; then leaves in order (drain,
    /// GOODBYE, children stopped, sockets closed). Throws if the endpoint cannot be used.
    package func run() async throws {
        var runtimeConfiguration = RemoteRuntimeConfiguration(name: worker.name, logger: logger)
        runtimeConfiguration.parentEndpoint = configuration.coordinatorEndpoint
        // A leader with standbys: the worker serves whichever of them answers.
        runtimeConfiguration.alternateParentEndpoints = Array(configuration.workerParentEndpoints.dropFirst())
        runtimeConfiguration.pool = worker.pool
        runtimeConfiguration.capacity = worker.capacity
        runtimeConfiguration.registry = registry
        runtimeConfiguration.requestTimeout = configuration.requestDeadline
        runtimeConfiguration.heartbeatInterval = configuration.heartbeatInterval
        runtimeConfiguration.heartbeatLiveness = configuration.heartbeatLiveness
        runtimeConfiguration.parentSecurity = security
        runtimeConfiguration.hostedChildObservers = hostedChildObservers
        runtimeConfiguration.tracer = tracer
        runtimeConfiguration.allowPlaintextOnNetwork = configuration.security.allowPlaintextOnNetwork
        runtimeConfiguration.protocolVersions = protocolVersions
        let runtime = try RemoteRuntime(configuration: runtimeConfiguration)
        logger.info(
            "worker started",
            metadata: [
                "worker": "\(worker.name)", "pool": "\(worker.pool)", "coordinator": "\(configuration.coordinatorEndpoint)",
                "types": "\(registry.typeNames.joined(separator: ","))", "security": security == .plaintext ? "plaintext" : "curve",
                "protocols": "\(protocolVersions.map(String.init).joined(separator: ","))",
            ])
        // Until graceful shutdown, or until the coordinator refuses this worker's name because
        // another live worker holds it: then it leaves and says why, rather than asking forever.
        let refusal = await withTaskGroup(of: JoinRefusal?.self) { group in
            group.addTask { await runtime.refusal().flatMap { if case .nameTaken = $0 { $0 } else { nil } } }
            group.addTask {
                try? await gracefulShutdown()
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        if refusal == nil, configuration.drainDeadline > .zero {
            // Graceful shutdown: hand the children over before leaving, so they move with their
            // latest state instead of becoming unavailable. The runtime logs how it went.
            logger.info(
                "worker draining", metadata: ["worker": "\(worker.name)", "deadline": "\(configuration.drainDeadline)"])
            _ = await runtime.drain(deadline: configuration.drainDeadline)
        }
        logger.info("worker leaving", metadata: ["worker": "\(worker.name)"])
        await runtime.shutdown()
        if let refusal {
            logger.critical("worker refused by the coordinator: \(refusal)", metadata: ["worker": "\(worker.name)"])
            throw refusal
        }
        logger.info("worker stopped", metadata: ["worker": "\(worker.name)"])
    }

    /// How long a graceful shutdown of this worker may take: the drain deadline, then the
    /// daemon's usual bound for leaving (`ClusterDaemon.shutdownBound`).
    package static func gracefulShutdownBound(for configuration: ClusterConfiguration) -> Duration {
        configuration.drainDeadline + ClusterDaemon.shutdownBound
    }

    /// The exit status of a worker daemon whose name another live worker holds
    /// (`JoinRefusal.nameTaken`): EX_TEMPFAIL, since the name is free again once that worker
    /// has left or its liveness window has passed (docs/OPERATIONS.md).
    package static let nameTakenExitCode: Int32 = 75

    /// Whether `error` (from `run()`) is the coordinator refusing this worker's name.
    package static func isNameTaken(_ error: any Error) -> Bool {
        if case .nameTaken? = error as? JoinRefusal { true } else { false }
    }
}
