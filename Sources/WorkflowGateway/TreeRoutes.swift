import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import WorkflowCluster
import WorkflowRemote

/// What the gateway answers about one tree — the shared root's or a session's: its rendering,
/// its stream, an event to one of its sinks, its inspection. The routes of both call these, so a
/// session answers exactly as the shared root does.
struct TreeRoutes: Sendable {
    let runtime: RemoteRuntime?
    let configuration: ClusterConfiguration
    let options: GatewayOptions
    let metrics: GatewayMetrics
    let logger: Logger

    /// The latest settled rendering with its children's statuses.
    func rendering(of session: any ClusterRootSession, scope: TreeScope) async -> Response {
        JSONResponses.bytes(await RenderingFeed.message(session: session, rendering: session.latestRendering, runtime: runtime, scope: scope))
    }

    /// Whether a request to a stream path may become a WebSocket: a plain GET (no upgrade) is
    /// told what the path needs (426, RFC 9110 §15.5.22).
    static func upgrade(_ request: Request) throws -> RouterShouldUpgrade {
        guard request.headers[.upgrade]?.lowercased().contains("websocket") == true else { throw UpgradeRequired() }
        return .upgrade([:])
    }

    /// Writes each message of `messages` to a WebSocket client until either side ends.
    func stream(_ messages: AsyncStream<[UInt8]>, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        metrics.streamClients.increment()
        defer { metrics.streamClients.decrement() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // The client's side: read (and ignore) until it closes. A text message that is
                // not UTF-8 throws, and the stream closes with 1007.
                for try await _ in inbound.messages(maxSize: 1 << 16) {}
            }
            group.addTask {
                // One buffer of one per client: a slow client skips renderings.
                for await bytes in messages {
                    do {
                        try await outbound.write(.text(String(decoding: bytes, as: UTF8.self)))
                    } catch {
                        return
                    }
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// The messages of one stream client of `session`, each built when the rendering arrives
    /// (a session has a client or two; the shared root shares one `RenderingFeed`).
    func messages(of session: any ClusterRootSession, scope: TreeScope) -> AsyncStream<[UInt8]> {
        let runtime = runtime
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            for await rendering in session.renderings() {
                continuation.yield(await RenderingFeed.message(session: session, rendering: rendering, runtime: runtime, scope: scope))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Sends the request's JSON body as an event to the sink its `{token}` names in `session`.
    func deliver(_ request: Request, context: some RequestContext, to session: any ClusterRootSession) async -> Response {
        // Tokens hold characters a path must escape (`:`, `@`, `~`): clients percent-encode.
        guard let raw = context.parameters.get("token"), let token = raw.removingPercentEncoding, !token.isEmpty else {
            return JSONResponses.error(.notFound, code: "unknown-token", message: "no sink token in the path")
        }
        let json: Data
        switch await Self.jsonBody(of: request, upTo: options.maxEventBytes, what: "an event") {
        case .success(let body): json = body
        case .failure(let refusal):
            metrics.event(result: refusal.code)
            return refusal.response
        }
        do throws(RootEventError) {
            try await session.send(event: json, to: token)
        } catch {
            metrics.event(result: error.code)
            // The client gets the reason in the answer and operators the count by result in
            // `workflow_gateway_events_total`: a client sending bad events must not fill the log.
            logger.debug("gateway: event not delivered: \(error)")
            return GatewayRoutes.response(for: error)
        }
        metrics.event(result: "sent")
        return JSONResponses.encoded(EventAccepted(result: "sent", token: token), status: .accepted)
    }

    /// The tree's inspection (`ClusterTreeInspection`); the shared root's lists the sessions too.
    func tree(of session: any ClusterRootSession, scope: TreeScope, sessions: SessionDirectory? = nil) async -> Response {
        let liveTree = await session.liveTree()
        let inspection = scope.restrict(await runtime?.inspect(tree: scope.runtimeTree))
        var tree = ClusterTreeInspection(session: session, liveTree: liveTree, runtime: inspection, configuration: configuration)
        tree.sessions = await sessions?.summaries()
        return JSONResponses.encoded(tree)
    }

    /// A JSON body refused before it reached the tree.
    struct BodyRefusal: Error {
        var code: String
        var response: Response
    }

    /// The request's body, if it is JSON (`Content-Type`) and at most `limit` bytes.
    static func jsonBody(of request: Request, upTo limit: Int, what: String) async -> Result<Data, BodyRefusal> {
        guard JSONMediaType.matches(request.headers[.contentType]) else {
            return .failure(
                BodyRefusal(
                    code: "unsupported-media-type",
                    response: JSONResponses.error(
                        .unsupportedMediaType, code: "unsupported-media-type", message: "\(what) is JSON: send Content-Type: application/json",
                        headers: [.accept: "application/json"])))
        }
        var request = request
        do {
            return .success(Data(try await request.collectBody(upTo: limit).readableBytesView))
        } catch {
            return .failure(
                BodyRefusal(
                    code: "too-large", response: JSONResponses.error(.contentTooLarge, code: "too-large", message: "\(what) is at most \(limit) bytes")))
        }
    }

    struct EventAccepted: Codable, Sendable {
        var result: String
        var token: String
    }
}
