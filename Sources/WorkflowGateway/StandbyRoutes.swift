import Hummingbird
import Logging

/// The gateway of a standby coordinator: it holds no tree, so every request but the probes is
/// answered `503 standby` with `Retry-After`, and the readiness probe says `"role": "standby"`.
///
/// A client or load balancer thus tells a standby (try again, or try the leader) from a
/// coordinator that is gone (no answer at all), and a probe needs no token to see the role.
enum StandbyRoutes {
    /// Seconds a client is told to wait before asking again: about how long a takeover takes.
    static let retryAfterSeconds = 1

    static func router() -> Router<GatewayRoutes.Context> {
        let router = Router(context: GatewayRoutes.Context.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: StandbyMiddleware())
        router.get("/health/live") { _, _ in
            JSONResponses.encoded(["live": true])
        }
        router.get("/health/ready") { _, _ -> Response in
            JSONResponses.encoded(
                ReadinessCheck.Report(ready: false, role: .standby, renderingSequence: 0, waitingFor: []), status: .serviceUnavailable)
        }
        return router
    }
}

/// Answers everything except the health probes `503 standby`, matched route or not.
struct StandbyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path.hasPrefix("/health/") { return try await next(request, context) }
        return JSONResponses.error(
            .serviceUnavailable, code: "standby",
            message: "this coordinator is a standby: another one leads; try again shortly, or ask the leader",
            headers: [.retryAfter: "\(StandbyRoutes.retryAfterSeconds)"])
    }
}
