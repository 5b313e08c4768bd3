import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import WorkflowCluster

/// Hummingbird's HTTP/1 channel with WebSocket upgrade, each connection held by an
/// `HTTPConnectionGuard`: the guard's socket side goes first in the pipeline, its message side
/// right after NIO's request decoder, where it sees the decoder's errors before anything else.
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let limits: GatewayLimits
    let maxBodyBytes: Int
    let connections: ConnectionCounter
    let metrics: GatewayMetrics

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connectionGuard = channel.eventLoop.makeCompletedFuture {
            let connectionGuard = HTTPConnectionGuard(
                limits: limits, maxBodyBytes: maxBodyBytes, connections: connections, metrics: metrics)
            try channel.pipeline.syncOperations.addHandler(connectionGuard.socketSide)
            return NIOLoopBound(connectionGuard, eventLoop: channel.eventLoop)
        }
        return connectionGuard.flatMap { connectionGuard in
            inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try channel.pipeline.syncOperations.addHandler(connectionGuard.value.messageSide, position: .after(decoder.handler))
                return value
            }
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with WebSocket upgrade over `webSocketRouter`, every connection guarded by
    /// `limits` (bodies over `maxBodyBytes` answered 413 before routing). One connection's
    /// pipeline is set up here first, on this thread (`PipelineWarmUp`).
    static func guardedHTTP1WebSocketUpgrade(
        webSocketRouter: Router<GatewayRoutes.Context>, configuration: HTTP1WebSocketUpgradeChannel.Configuration, limits: GatewayLimits,
        maxBodyBytes: Int, metrics: GatewayMetrics, logger: Logger
    ) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        // One connection's channel, answering with `responder`, counted by `connections` and `metrics`.
        @Sendable func channel(_ responder: @escaping HTTPChannelHandler.Responder, connections: ConnectionCounter, metrics: GatewayMetrics) -> GuardedHTTPChannel {
            GuardedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                limits: limits, maxBodyBytes: maxBodyBytes, connections: connections, metrics: metrics)
        }
        do {
            try PipelineWarmUp.run(
                channel({ _, _, _ in }, connections: ConnectionCounter(), metrics: GatewayMetrics(factory: NOOPMetricsHandler.instance)), logger: logger)
        } catch {
            logger.debug("the gateway's connection pipeline was not warmed up", metadata: ["error": "\(error)"])
        }
        let connections = ConnectionCounter()
        return HTTPServerBuilder { responder in channel(responder, connections: connections, metrics: metrics) }
    }
}
