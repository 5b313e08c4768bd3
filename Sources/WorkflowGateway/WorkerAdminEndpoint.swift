import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import WorkflowCluster

/// A worker's optional admin HTTP endpoint (`--admin-listen`): `GET /metrics` (its runtime's
/// metrics, Prometheus text) and `GET /health/live`.
///
/// Workers report their own metrics rather than through the coordinator: a scrape then sees a
/// worker even while it is cut off from the coordinator (when its numbers matter most), and the
/// wire protocol stays free of monitoring traffic. It serves nothing that changes state.
package enum WorkerAdminEndpoint {
    /// The endpoint as a service to run beside the worker. `onListening` gets the bound address.
    package static func service(
        address: GatewayAddress, registry: PrometheusCollectorRegistry, logger: Logger,
        onListening: @escaping @Sendable (GatewayAddress) -> Void = { _ in }
    ) -> any Service {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("/health/live") { _, _ in JSONResponses.encoded(["live": true]) }
        var serverLogger = logger
        serverLogger.logLevel = max(logger.logLevel, .notice)
        let host = address.host
        return Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: address.port), serverName: nil),
            onServerRunning: { channel in onListening(GatewayAddress(host: host, port: channel.localAddress?.port ?? address.port)) },
            logger: serverLogger)
    }
}
