import Hummingbird

/// Requires `Authorization: Bearer TOKEN` on every request except the health probes and the
/// application's static pages.
///
/// A gateway on a non-loopback address must have a token (the configuration refuses otherwise):
/// `POST /api/events` changes the tree's state, and renderings and metrics may be private.
/// Probes stay open (a supervisor or Kubernetes probe carries no token, and they reveal only
/// whether the process serves), and so do the pages (code without data; they ask the API, which
/// checks). A browser's WebSocket cannot set headers, so the stream also accepts the token as
/// the `access_token` query parameter; keep query strings out of a reverse proxy's access log.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String
    let openPaths: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path.hasPrefix("/health/") || openPaths.contains(path) { return try await next(request, context) }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.constantTimeEqual(String(header.dropFirst("Bearer ".count)), token)
        {
            return try await next(request, context)
        }
        if path == GatewayRoutes.renderingsPath, let query = request.uri.queryParameters.get("access_token"),
            Self.constantTimeEqual(query, token)
        {
            return try await next(request, context)
        }
        return JSONResponses.error(
            .unauthorized, code: "unauthorized", message: "this gateway requires Authorization: Bearer TOKEN",
            headers: [.wwwAuthenticate: "Bearer"])
    }

    /// Compares without returning early, so timing does not reveal how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
