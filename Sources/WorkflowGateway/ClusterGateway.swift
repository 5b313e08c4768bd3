import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import WorkflowCluster
import WorkflowRemote

/// The coordinator's HTTP gateway as a companion of its root: it serves the routes of
/// `GatewayRoutes` from the moment the root starts until the coordinator stops.
///
/// A companion, so every application's coordinator gets it from configuration alone (the daemon
/// adds it when `gateway.listen` is set), and it sees the root only through its session, as any
/// other client does. It prints `{"event":"gateway","url":…}` (JSON mode) or a note (text mode)
/// with the address it bound, which matters when the port was 0.
public struct ClusterGateway: RootCompanion, StandbyCompanion {
    /// How it serves.
    public let options: GatewayOptions
    private let runtime = RuntimeSlot()

    /// Creates the gateway; nothing listens until the coordinator runs it.
    public init(options: GatewayOptions) {
        self.options = options
    }

    /// Keeps the runtime for the tree inspector and the readiness probe.
    public func prepare(runtime: RemoteRuntime, context: CoordinatorContext) async throws {
        self.runtime.set(runtime)
    }

    /// Serves until cancelled (the coordinator stopping) or until the coordinator's graceful
    /// shutdown; a port that cannot be bound fails the coordinator (exit 1).
    public func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd {
        let application = Self.application(
            session: session, runtime: runtime.get(), configuration: context.configuration, options: options, logger: context.logger,
            sessions: context.sessions
        ) { address in
            let url = "http://\(address)"
            context.logger.info("gateway listening", metadata: ["url": "\(url)"])
            context.console.event(["event": "gateway", "url": url, "role": "leader"])
            context.console.note("gateway: \(url)/")
        }
        try await Self.runUntilCancelledThenShutDownGracefully(application, logger: context.logger)
        return .keepServing
    }

    /// Serves `StandbyRoutes` until cancelled (the coordinator took the lease, or is
    /// stopping), then unbinds promptly: a connection still open gets a moment, not the
    /// leader's shutdown grace, since the leader's gateway waits for the port.
    package func serveStandby(context: CoordinatorContext) async throws {
        let standby = StandbyRoutes.router()
        let application = Self.application(router: standby, webSocketRouter: standby, options: options, logger: context.logger) { address in
            let url = "http://\(address)"
            context.logger.info("gateway listening (standby)", metadata: ["url": "\(url)"])
            context.console.event(["event": "gateway", "url": url, "role": "standby"])
            context.console.note("gateway (standby): \(url)/")
        }
        try await Self.runUntilCancelledThenShutDownGracefully(application, logger: context.logger, shutdownGrace: .milliseconds(250))
    }

    /// Runs `application`; the caller's cancellation (the coordinator stopping) becomes the
    /// server's graceful shutdown, which it finishes, instead of cancelling the server mid-way
    /// (which logged `Server shutdown error: Already closed` and `Waiting on child channel:
    /// CancellationError()` at every clean SIGTERM). Open connections get `shutdownGrace` to
    /// close before the server is cancelled after all.
    static func runUntilCancelledThenShutDownGracefully(
        _ application: some ApplicationProtocol, logger: Logger, shutdownGrace: Duration = .seconds(10)
    ) async throws {
        var groupLogger = logger
        groupLogger.logLevel = max(logger.logLevel, .notice)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: groupLogger))
        // Not a child task: the caller's cancellation must not reach the server directly.
        let serving = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await serving.value
        } onCancel: {
            Task {
                await group.triggerGracefulShutdown()
                try? await Task.sleep(for: shutdownGrace)
                serving.cancel()
            }
        }
    }

    /// The gateway as a Hummingbird application (what `run` serves; tests drive it with
    /// HummingbirdTesting). `onListening` gets the bound address once the server runs.
    package static func application(
        session: any ClusterRootSession, runtime: RemoteRuntime?, configuration: ClusterConfiguration, options: GatewayOptions,
        logger: Logger, sessions: SessionDirectory? = nil, onListening: @escaping @Sendable (GatewayAddress) -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let routes = GatewayRoutes.router(
            session: session, runtime: runtime, configuration: configuration, options: options, logger: logger, sessions: sessions)
        return application(router: routes, webSocketRouter: routes.router, options: options, logger: logger, onListening: onListening)
    }

    /// `router` served as `options` say, its WebSocket upgrades routed by `webSocketRouter`.
    static func application<Routes: HTTPResponderBuilder>(
        router: Routes, webSocketRouter: Router<GatewayRoutes.Context>, options: GatewayOptions, logger: Logger,
        onListening: @escaping @Sendable (GatewayAddress) -> Void
    ) -> some ApplicationProtocol where Routes.Responder.Context == GatewayRoutes.Context {
        var serverLogger = logger
        // Hummingbird logs every request at debug/info; the coordinator's log keeps its own lines.
        serverLogger.logLevel = max(logger.logLevel, .notice)
        let host = options.address.host
        return Application(
            router: router,
            server: .guardedHTTP1WebSocketUpgrade(
                webSocketRouter: webSocketRouter,
                // Text frames must be UTF-8: a client sending anything else is closed with 1007.
                configuration: .init(ws: WebSocketServerConfiguration(validateUTF8: true)), limits: options.limits,
                maxBodyBytes: options.maxEventBytes, metrics: GatewayMetrics(factory: options.metricsFactory), logger: logger),
            configuration: ApplicationConfiguration(address: .hostname(host, port: options.address.port), serverName: nil),
            onServerRunning: { channel in
                onListening(GatewayAddress(host: host, port: channel.localAddress?.port ?? options.address.port))
            },
            logger: serverLogger)
    }
}

/// The runtime handed to `prepare`, read by `run` (a companion is a value; this is its one slot).
final class RuntimeSlot: Sendable {
    private let runtime = Mutex<RemoteRuntime?>(nil)
    func set(_ value: RemoteRuntime) { runtime.withLock { $0 = value } }
    func get() -> RemoteRuntime? { runtime.withLock { $0 } }
}
