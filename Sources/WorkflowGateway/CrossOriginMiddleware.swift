import HTTPTypes
import Hummingbird
import WorkflowCluster

/// CORS for the pages of `gateway.allowed_origins`: a page served by one coordinator that
/// follows its session to another coordinator's address calls that gateway across origins.
///
/// For a request whose `Origin` is allowed, every answer (errors, 401 and 307 included, so the
/// page can read them) names the origin in `Access-Control-Allow-Origin` and exposes `Location`
/// and `Retry-After`; a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
/// 204 with the API's methods and headers (`Authorization`, `Content-Type`). A preflight from
/// another origin is answered 403 `origin-not-allowed`; any other request from one is served
/// without CORS headers (a browser then keeps the answer from the page; same-origin requests
/// and clients other than browsers are unaffected). Runs before the bearer token check: a
/// preflight carries no token. WebSocket handshakes are not subject to CORS: the stream takes
/// its token in the query, like a page of the gateway's own origin.
struct CrossOriginMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowed: Set<String>

    init(allowed: [GatewayOrigin]) {
        self.allowed = Set(allowed.map(\.description))
    }

    /// The methods and request headers a preflight may ask for: the API's.
    static var allowMethods: String { "GET, HEAD, POST, DELETE" }
    static var allowHeaders: String { "Authorization, Content-Type" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let isAllowed = allowed.contains(GatewayOrigin(parsing: origin)?.description ?? "")
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            guard isAllowed else {
                return JSONResponses.error(
                    .forbidden, code: "origin-not-allowed",
                    message: "pages of \(origin) may not call this gateway across origins (gateway.allowed_origins)", headers: [.vary: "Origin"])
            }
            return Response(
                status: .noContent,
                headers: [
                    .accessControlAllowOrigin: origin, .accessControlAllowMethods: Self.allowMethods,
                    .accessControlAllowHeaders: Self.allowHeaders, .accessControlMaxAge: "600", .vary: "Origin",
                ])
        }
        guard isAllowed else { return try await next(request, context) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = "Location, Retry-After"
        response.headers[values: .vary].append("Origin")
        return response
    }
}
