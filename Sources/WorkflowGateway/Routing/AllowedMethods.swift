import HTTPTypes
import Hummingbird
import Synchronization

/// The methods each of the gateway's paths serves, recorded as its routes are added, so a
/// request for a known path with another method is answered 405 with `Allow` (RFC 9110 §15.5.6)
/// rather than 404. A path that serves GET serves HEAD too.
final class AllowedMethods: Sendable {
    private let routes = Mutex<[(path: RouterPath, methods: Set<HTTPRequest.Method>)]>([])

    func add(_ method: HTTPRequest.Method, _ path: RouterPath) {
        routes.withLock { routes in
            let methods: Set<HTTPRequest.Method> = method == .get ? [.get, .head] : [method]
            if let index = routes.firstIndex(where: { $0.path == path }) {
                routes[index].methods.formUnion(methods)
            } else {
                routes.append((path, methods))
            }
        }
    }

    /// The methods `path` serves, as an `Allow` value (`GET, HEAD`); `nil` when no route has it.
    func allow(for path: String) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        let methods = routes.withLock { routes in
            routes.filter { Self.matches($0.path, components) }.reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        }
        guard !methods.isEmpty else { return nil }
        return methods.map(\.rawValue).sorted().joined(separator: ", ")
    }

    private static func matches(_ pattern: RouterPath, _ components: [Substring]) -> Bool {
        guard pattern.components.count == components.count else { return false }
        return zip(pattern.components, components).allSatisfy { element, component in element ~= component }
    }
}

/// A router's methods that also record each route in `AllowedMethods`.
struct MethodRecordingRouter<Context: RequestContext>: RouterMethods {
    let router: Router<Context>
    let allowed: AllowedMethods

    @discardableResult func on<Responder: HTTPResponder>(
        _ path: RouterPath, method: HTTPRequest.Method, responder: Responder
    ) -> Self where Responder.Context == Context {
        allowed.add(method, path)
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}

/// Answers 405 with `Allow` (and the API's JSON error) for a path the router has under other
/// methods, where the router alone would answer 404.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowed: AllowedMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allow = allowed.allow(for: request.uri.path) else { throw error }
            return JSONResponses.error(
                .methodNotAllowed, code: "method-not-allowed", message: "\(request.method.rawValue) is not served here; allowed: \(allow)",
                headers: [.allow: allow])
        }
    }
}
