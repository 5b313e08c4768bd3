import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Prometheus
import RemoteTestSupport
import WorkflowCluster
import WorkflowGateway
import WorkflowRemote

/// A rendering message as the gateway sends it, with the rendering decoded as `T`.
struct RenderingEnvelope<T: Decodable & Sendable>: Decodable, Sendable {
    /// A remote child's status, as each message carries it.
    struct Child: Decodable, Sendable {
        var path: String
        var type: String
        var status: String
        var worker: String?
        var detail: String
    }
    var children: [Child]
    var rendering: T
    var root: String
    var sequence: UInt64
}

/// The JSON error body of every failing API route.
struct ErrorBody: Decodable, Equatable {
    var error: String
    var message: String
}

enum GatewayTesting {
    static var quietLogger: Logger {
        var logger = Logger(label: "test.gateway")
        logger.logLevel = .critical
        return logger
    }

    /// Options on a free loopback port, with a registry of the test's own.
    static func options(
        bearerToken: String? = nil, assets: [WebAsset] = [], registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        maxEventBytes: Int = 1 << 20
    ) -> GatewayOptions {
        GatewayOptions(
            address: GatewayAddress(host: "127.0.0.1", port: 0), bearerToken: bearerToken, assets: assets, metricsRegistry: registry,
            metricsFactory: PrometheusMetricsFactory(registry: registry), maxEventBytes: maxEventBytes)
    }

    /// The gateway over `session` (and `runtime`), as an application to test.
    static func application(
        session: any ClusterRootSession, runtime: RemoteRuntime? = nil, configuration: ClusterConfiguration? = nil,
        options: GatewayOptions = options(), sessions: SessionDirectory? = nil
    ) -> some ApplicationProtocol {
        ClusterGateway.application(
            session: session, runtime: runtime, configuration: configuration ?? ClusterConfiguration(coordinatorEndpoint: "ipc:///unused"),
            options: options, logger: quietLogger, sessions: sessions)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
    }

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// The header fields of a posted event.
    static let json: HTTPFields = [.contentType: "application/json"]

    /// A parent runtime on a unique ipc endpoint (quiet) and a metrics factory. The gateway tests
    /// never detect a worker by its silence (a worker leaves with GOODBYE): a generous liveness
    /// window keeps a loaded machine from taking a slow worker for dead.
    static func parentRuntime(
        name: String, placement: PlacementTable = PlacementTable(), factory: PrometheusMetricsFactory? = nil, maxOutstandingEvents: Int = 50_000
    ) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name, logger: quietLogger)
        configuration.listenEndpoint = "ipc:///tmp/wf-gateway-\(getpid())-\(UUID().uuidString.prefix(8))"
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 100
        configuration.placementTable = placement
        configuration.metricsFactory = factory
        configuration.maxOutstandingEvents = maxOutstandingEvents
        return try RemoteRuntime(configuration: configuration)
    }

    /// A worker runtime hosting the counters, joined to `parent`.
    static func worker(named name: String, joining parent: RemoteRuntime) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name, logger: quietLogger)
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.registry = RemotableRegistry().registering(CounterWorkflow.self)
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 100
        return try RemoteRuntime(configuration: configuration)
    }
}

/// What the tests read of a counter board's JSON rendering (one remote counter `c`).
struct BoardJSON: Decodable, Sendable {
    struct Counter: Decodable, Sendable {
        var count: Int
        var onIncrement: String?
    }
    var c: Counter
}
