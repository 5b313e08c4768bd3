import Foundation
import Logging
import ServiceLifecycle
import WorkflowRemote

/// The worker daemon: connects to the coordinator, announces itself (name, pool, hostable types,
/// capacity, protocol version — all in the runtime's HELLO) and hosts the children placed on it
/// until graceful shutdown, when it tells the coordinator it leaves (GOODBYE) and exits.
public struct WorkerService: Service {
    /// The effective configuration.
    public let configuration: ClusterConfiguration
    /// This worker's entry (name, pool, capacity).
    public let worker: WorkerEntry
    /// The types it can host.
    public let registry: RemotableRegistry
    /// Where it logs.
    public let logger: Logger
    /// Its transport security, resolved from the key files at start (`CurveKeyFiles`).
    public let security: ClientSecurity

    /// Creates the service; nothing connects until `run()`.
    public init(
        configuration: ClusterConfiguration, worker: WorkerEntry, registry: RemotableRegistry,
        security: ClientSecurity = .plaintext, logger: Logger
    ) {
        self.security = security
        self.configuration = configuration
        self.worker = worker
        self.registry = registry
        self.logger = logger
    }

    /// Connects and hosts children until graceful shutdown; then leaves in order (GOODBYE,
    /// children stopped, sockets closed). Throws if the endpoint cannot be used.
    public func run() async throws {
        var runtimeConfiguration = RemoteRuntimeConfiguration(name: worker.name, logger: logger)
        runtimeConfiguration.parentEndpoint = configuration.coordinatorEndpoint
        runtimeConfiguration.pool = worker.pool
        runtimeConfiguration.capacity = worker.capacity
        runtimeConfiguration.registry = registry
        runtimeConfiguration.requestTimeout = configuration.requestDeadline
        runtimeConfiguration.heartbeatInterval = configuration.heartbeatInterval
        runtimeConfiguration.heartbeatLiveness = configuration.heartbeatLiveness
        runtimeConfiguration.parentSecurity = security
        runtimeConfiguration.allowPlaintextOnNetwork = configuration.security.allowPlaintextOnNetwork
        let runtime = try RemoteRuntime(configuration: runtimeConfiguration)
        logger.info(
            "worker started",
            metadata: [
                "worker": "\(worker.name)", "pool": "\(worker.pool)", "coordinator": "\(configuration.coordinatorEndpoint)",
                "types": "\(registry.typeNames.joined(separator: ","))", "security": security == .plaintext ? "plaintext" : "curve",
            ])
        try? await gracefulShutdown()
        logger.info("worker leaving", metadata: ["worker": "\(worker.name)"])
        await runtime.shutdown()
        logger.info("worker stopped", metadata: ["worker": "\(worker.name)"])
    }
}
