import Hummingbird

/// The gateway's router: Hummingbird's, with the two routes every event takes also answered
/// without it (`EventPath`).
///
/// Both routes are registered with the router too, by the same call (`EventRoutes.addShared`,
/// `addSession`: its 405s and metrics know them, and a path in another spelling still reaches
/// them); `eventRoutes` holds the same handlers behind the same middleware, so a request
/// answered either way is answered identically.
struct GatewayRouter: HTTPResponderBuilder {
    typealias Context = GatewayRoutes.Context

    /// Every route, the event routes included; also the WebSocket upgrades' router.
    let router: Router<Context>
    let eventRoutes: EventRoutes

    func buildResponder() -> GatewayResponder {
        GatewayResponder(router: router.buildResponder(), eventRoutes: eventRoutes)
    }
}

/// The handlers of the event routes, each behind the gateway's middleware, built once.
struct EventRoutes: Sendable {
    typealias Context = GatewayRoutes.Context
    typealias Handler = @Sendable (Request, Context) async -> Response

    private let middlewares: [any MiddlewareProtocol<Request, Response, Context>]
    private var shared: (any HTTPResponder<Context>)?
    private var session: (any HTTPResponder<Context>)?

    /// Routes that run `middlewares`, in order, before their handler (as the router runs the
    /// middleware added before a route).
    init(middlewares: [any MiddlewareProtocol<Request, Response, Context>]) {
        self.middlewares = middlewares
    }

    /// Answers `/api/events/{token}` with `handler`, here and through `router`.
    mutating func addShared(to router: MethodRecordingRouter<Context>, _ handler: @escaping Handler) {
        router.post(RouterPath(EventPath.sharedPattern), use: handler)
        shared = chain(handler)
    }

    /// Answers `/api/sessions/{id}/events/{token}` with `handler`, here and through `router`.
    mutating func addSession(to router: MethodRecordingRouter<Context>, _ handler: @escaping Handler) {
        router.post(RouterPath(EventPath.sessionPattern), use: handler)
        session = chain(handler)
    }

    /// The responder of the event route `request`'s POST spells, with the route's parameters and
    /// pattern; `nil` for any other request.
    func match(_ request: Request) -> (responder: any HTTPResponder<Context>, parameters: Parameters, pattern: String)? {
        guard request.method == .post, let path = EventPath(request.uri.path) else { return nil }
        switch path {
        case .shared(let token):
            guard let shared else { return nil }
            var parameters = Parameters()
            parameters["token"] = token
            return (shared, parameters, EventPath.sharedPattern)
        case .session(let id, let token):
            guard let session else { return nil }
            var parameters = Parameters()
            parameters["id"] = id
            parameters["token"] = token
            return (session, parameters, EventPath.sessionPattern)
        }
    }

    private func chain(_ handler: @escaping Handler) -> any HTTPResponder<Context> {
        var responder: any HTTPResponder<Context> = CallbackResponder<Context> { request, context in await handler(request, context) }
        for middleware in middlewares.reversed() {
            let next = responder
            responder = CallbackResponder<Context> { request, context in
                try await middleware.handle(request, context: context, next: next.respond(to:context:))
            }
        }
        return responder
    }
}

/// Answers an event's POST through `EventRoutes` and every other request through the router,
/// as the router would: the route's parameters and pattern set on the context, and an
/// `HTTPResponseError` a middleware throws turned into its response.
struct GatewayResponder: HTTPResponder {
    typealias Context = GatewayRoutes.Context

    let router: RouterResponder<Context>
    let eventRoutes: EventRoutes

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let (responder, parameters, pattern) = eventRoutes.match(request) else {
            return try await router.respond(to: request, context: context)
        }
        var routed = context
        routed.coreContext.parameters = parameters
        routed.coreContext.endpointPath.value = pattern
        do {
            return try await responder.respond(to: request, context: routed)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }
}
