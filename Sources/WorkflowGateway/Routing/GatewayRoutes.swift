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
/// | `GET /api/rendering` | the latest settled rendering: `{"children": […], "rendering": …, "root": …, "sequence": N}` (`children`: each remote child's status), `ETag` its sequence; 304 to `If-None-Match` naming it |
/// | `GET /api/renderings` (WebSocket) | that message for every settled rendering; newest wins for a slow client (426 without an upgrade; a text frame that is not UTF-8 closes it with 1007); with `?deltas=1` (and `since=N` to resume), the changes after a first whole frame (`RenderingStreamClient`) |
/// | `POST /api/events/{token}` | the JSON body (`Content-Type: application/json`) sent to the sink the token names: 202, or 400/404/410/413/415/429 |
/// | `GET /api/tree` | the distributed tree and the workers (`ClusterTreeInspection`) |
/// | `GET /health/live`, `GET /health/ready` | probes: 200 or 503 with a JSON report |
/// | `GET /metrics` | Prometheus text, when a registry is configured |
/// | `GET /inspector` | a page drawing `/api/tree`, live |
/// | `GET /workflow-client.js` | the JavaScript module pages use (`ClientScript`) |
/// | the application's assets | e.g. the email browser's page at `/` |
///
/// Every GET route answers HEAD too; another method on a known path is 405 with `Allow`. With
/// `gateway.allowed_origins`, pages of those origins may call every route across origins
/// (`CrossOriginMiddleware`).
package enum GatewayRoutes {
    /// The path of the rendering stream (the only route that also takes the token as a query
    /// parameter, since a browser's WebSocket cannot send headers).
    package static let renderingsPath = "/api/renderings"

    /// The request context of every route (WebSocket upgrades need their own kind).
    package typealias Context = BasicWebSocketRequestContext

    /// Builds the router: Hummingbird's, with an event's POST matched before it
    /// (`GatewayRouter`). `runtime` is `nil` for a root that has no remote runtime (tests);
    /// then the tree has no remote children and readiness needs only a rendering. With
    /// `sessions`, the session routes (`SessionRoutes`) serve a tree per client beside the
    /// shared root.
    static func router(
        session: any ClusterRootSession, runtime: RemoteRuntime?, configuration: ClusterConfiguration, options: GatewayOptions,
        logger: Logger, sessions: SessionDirectory? = nil
    ) -> GatewayRouter {
        let hummingbirdRouter = Router(context: Context.self, options: .autoGenerateHeadEndpoints)
        let allowed = AllowedMethods()
        let router = MethodRecordingRouter(router: hummingbirdRouter, allowed: allowed)
        let metrics = GatewayMetrics(factory: options.metricsFactory)
        // An application's own asset at a built-in path replaces the built-in one.
        let assets = options.assets + [InspectorPage.asset, ClientScript.asset].filter { builtIn in !options.assets.contains { $0.path == builtIn.path } }
        let assetPaths = Set(assets.map(\.path))
        var middlewares: [any MiddlewareProtocol<Request, Response, Context>] = [RequestCountingMiddleware(metrics: metrics)]
        if !options.allowedOrigins.isEmpty {
            middlewares.append(CrossOriginMiddleware(allowed: options.allowedOrigins))
        }
        if let token = options.bearerToken {
            middlewares.append(BearerTokenMiddleware(token: token, openPaths: assetPaths))
        }
        middlewares.append(MethodNotAllowedMiddleware(allowed: allowed))
        for middleware in middlewares { router.add(middleware: middleware) }
        var eventRoutes = EventRoutes(middlewares: middlewares)
        let treeRoutes = TreeRoutes(runtime: runtime, configuration: configuration, options: options, metrics: metrics, logger: logger)

        router.get("/api/rendering") { request, _ in
            await treeRoutes.rendering(of: session, scope: .shared, request: request)
        }

        let feed = RenderingFeed(session: session, runtime: runtime, scope: .shared, kept: options.stream.window)
        router.ws(RouterPath(renderingsPath)) { request, _ in
            try TreeRoutes.upgrade(request)
        } onUpgrade: { inbound, outbound, context in
            try await treeRoutes.stream(feed, request: TreeRoutes.streamRequest(context.request), inbound: inbound, outbound: outbound)
        }

        eventRoutes.addShared(to: router) { request, context in await treeRoutes.deliver(request, context: context, to: session) }

        router.get("/api/tree") { _, _ -> Response in
            await treeRoutes.tree(of: session, scope: .shared, sessions: sessions)
        }

        if let sessions {
            let sessionRoutes = SessionRoutes(
                directory: sessions, sharedRoot: session.name, tree: treeRoutes, feeds: SessionFeeds(runtime: runtime, kept: options.stream.window))
            sessionRoutes.add(to: router)
            eventRoutes.addSession(to: router) { request, context in await sessionRoutes.deliverEvent(request, context: context) }
        }

        router.get("/health/live") { _, _ in
            JSONResponses.encoded(["live": true])
        }

        let readiness = ReadinessCheck(configuration: configuration)
        router.get("/health/ready") { _, _ -> Response in
            let children = TreeScope.shared.children(of: await runtime?.inspect(tree: TreeScope.shared.runtimeTree))
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
        return GatewayRouter(router: hummingbirdRouter, eventRoutes: eventRoutes)
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
