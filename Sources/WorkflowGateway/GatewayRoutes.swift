import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Prometheus
import WorkflowCluster
import WorkflowRemote

/// The gateway's routes, over a root session and (when the root runs on a `RemoteRuntime`) the
/// runtime that places its children.
///
/// | route | answers |
/// |---|---|
/// | `GET /api/rendering` | the latest settled rendering: `{"children": […], "rendering": …, "root": …, "sequence": N}` (`children`: each remote child's status) |
/// | `GET /api/renderings` (WebSocket) | that message for every settled rendering; newest wins for a slow client (426 without an upgrade; a text frame that is not UTF-8 closes it with 1007) |
/// | `POST /api/events/{token}` | the JSON body (`Content-Type: application/json`) sent to the sink the token names: 202, or 400/404/410/413/415/429 |
/// | `GET /api/tree` | the distributed tree and the workers (`ClusterTreeInspection`) |
/// | `GET /health/live`, `GET /health/ready` | probes: 200 or 503 with a JSON report |
/// | `GET /metrics` | Prometheus text, when a registry is configured |
/// | `GET /inspector` | a page drawing `/api/tree`, live |
/// | `GET /workflow-client.js` | the JavaScript module pages use (`ClientScript`) |
/// | the application's assets | e.g. the email browser's page at `/` |
///
/// Every GET route answers HEAD too; another method on a known path is 405 with `Allow`.
public enum GatewayRoutes {
    /// The path of the rendering stream (the only route that also takes the token as a query
    /// parameter, since a browser's WebSocket cannot send headers).
    public static let renderingsPath = "/api/renderings"

    /// The request context of every route (WebSocket upgrades need their own kind).
    public typealias Context = BasicWebSocketRequestContext

    /// Builds the router. `runtime` is `nil` for a root that has no remote runtime (tests);
    /// then the tree has no remote children and readiness needs only a rendering.
    public static func router(
        session: any ClusterRootSession, runtime: RemoteRuntime?, configuration: ClusterConfiguration, options: GatewayOptions,
        logger: Logger
    ) -> Router<Context> {
        let hummingbirdRouter = Router(context: Context.self, options: .autoGenerateHeadEndpoints)
        let allowed = AllowedMethods()
        let router = MethodRecordingRouter(router: hummingbirdRouter, allowed: allowed)
        let metrics = GatewayMetrics(factory: options.metricsFactory)
        // An application's own asset at a built-in path replaces the built-in one.
        let assets = options.assets + [InspectorPage.asset, ClientScript.asset].filter { builtIn in !options.assets.contains { $0.path == builtIn.path } }
        let assetPaths = Set(assets.map(\.path))
        router.add(middleware: RequestCountingMiddleware(metrics: metrics))
        if let token = options.bearerToken {
            router.add(middleware: BearerTokenMiddleware(token: token, openPaths: assetPaths))
        }
        router.add(middleware: MethodNotAllowedMiddleware(allowed: allowed))

        router.get("/api/rendering") { _, _ in
            JSONResponses.bytes(await RenderingFeed.message(session: session, rendering: session.latestRendering, runtime: runtime))
        }

        let feed = RenderingFeed(session: session, runtime: runtime)

        router.ws(RouterPath(renderingsPath)) { request, _ in
            // A plain GET (no upgrade) is told what the path needs (RFC 9110 §15.5.22).
            guard request.headers[.upgrade]?.lowercased().contains("websocket") == true else { throw UpgradeRequired() }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            metrics.streamClients.increment()
            defer { metrics.streamClients.decrement() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // The client's side: read (and ignore) until it closes. A text message that
                    // is not UTF-8 throws, and the stream closes with 1007.
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
                group.addTask {
                    // One buffer of one per client: a slow client skips renderings.
                    for await bytes in feed.subscribe() {
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

        router.post("/api/events/{token}") { request, context -> Response in
            // Tokens hold characters a path must escape (`:`, `@`, `~`): clients percent-encode.
            guard let raw = context.parameters.get("token"), let token = raw.removingPercentEncoding, !token.isEmpty else {
                return JSONResponses.error(.notFound, code: "unknown-token", message: "no sink token in the path")
            }
            guard JSONMediaType.matches(request.headers[.contentType]) else {
                metrics.event(result: "unsupported-media-type")
                return JSONResponses.error(
                    .unsupportedMediaType, code: "unsupported-media-type", message: "an event is JSON: send Content-Type: application/json",
                    headers: [.accept: "application/json"])
            }
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: options.maxEventBytes)
            } catch {
                metrics.event(result: "too-large")
                return JSONResponses.error(
                    .contentTooLarge, code: "too-large", message: "an event body is at most \(options.maxEventBytes) bytes")
            }
            let json = Data(body.readableBytesView)
            do throws(RootEventError) {
                try await session.send(event: json, to: token)
            } catch {
                metrics.event(result: error.code)
                // The client gets the reason in the answer and operators the count by result in
                // `workflow_gateway_events_total`: a client sending bad events must not fill the log.
                logger.debug("gateway: event not delivered: \(error)")
                return response(for: error)
            }
            metrics.event(result: "sent")
            return JSONResponses.encoded(EventAccepted(result: "sent", token: token), status: .accepted)
        }

        router.get("/api/tree") { _, _ -> Response in
            let liveTree = await session.liveTree()
            let inspection = await runtime?.inspect()
            return JSONResponses.encoded(
                ClusterTreeInspection(session: session, liveTree: liveTree, runtime: inspection, configuration: configuration))
        }

        router.get("/health/live") { _, _ in
            JSONResponses.encoded(["live": true])
        }

        let readiness = ReadinessCheck(configuration: configuration)
        router.get("/health/ready") { _, _ -> Response in
            let children = await runtime?.inspect().children ?? []
            let report = readiness.report(session: session, children: children)
            return JSONResponses.encoded(report, status: report.ready ? .ok : .serviceUnavailable)
        }

        if let registry = options.metricsRegistry {
            router.get("/metrics") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
        }

        for asset in assets {
            router.get(RouterPath(asset.path)) { _, _ in
                Response(
                    status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "no-cache"],
                    body: .init(byteBuffer: ByteBuffer(bytes: asset.body)))
            }
        }
        return hummingbirdRouter
    }

    /// The status and JSON error for an event that was not delivered.
    static func response(for error: RootEventError) -> Response {
        switch error {
        case .unknownToken: JSONResponses.error(.notFound, code: error.code, message: error.description)
        case .staleToken, .restartedToken: JSONResponses.error(.gone, code: error.code, message: error.description)
        case .undecodableEvent: JSONResponses.error(.badRequest, code: error.code, message: error.description)
        case .refused: JSONResponses.error(.tooManyRequests, code: error.code, message: error.description, headers: [.retryAfter: "1"])
        case .notDurable: JSONResponses.error(.serviceUnavailable, code: error.code, message: error.description)
        }
    }

    struct EventAccepted: Codable, Sendable {
        var result: String
        var token: String
    }
}

/// Counts every answered request by route pattern and status (`workflow_gateway_requests_total`).
struct RequestCountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            metrics.request(route: context.endpointPath ?? "unmatched", status: response.status.code)
            return response
        } catch let error as HTTPResponseError {
            metrics.request(route: context.endpointPath ?? "unmatched", status: error.status.code)
            throw error
        }
    }
}
