import Hummingbird
import HummingbirdWebSocket
import Logging
import Metrics
import Testing
import WorkflowCluster
@testable import WorkflowGateway

/// The gateway's connection pipeline is set up once, on the calling thread, before it serves.
@Suite("Gateway pipeline warm-up")
struct PipelineWarmUpTests {
    @Test("the gateway's own pipeline sets up on an embedded channel, serves a request's head and closes")
    func warmsUp() throws {
        let connections = ConnectionCounter()
        try PipelineWarmUp.run(
            GuardedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: { _, _, _ in }, webSocketResponder: Router(context: GatewayRoutes.Context.self).buildResponder(),
                    configuration: .init(ws: WebSocketServerConfiguration())),
                limits: GatewayLimits(), maxBodyBytes: 1024, connections: connections,
                metrics: GatewayMetrics(factory: NOOPMetricsHandler.instance)),
            logger: Logger(label: "warm-up"))
        #expect(connections.value == 0, "the warm-up's connection was counted on its own counter and closed")
    }
}
