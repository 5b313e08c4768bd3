import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Prometheus
import RemoteTestSupport
import Testing
import WorkflowCluster
@testable import WorkflowGateway
import WorkflowClusterTesting

/// The event routes answered before the router (`EventPath`, `EventRoutes`): which paths they
/// take, and that a request answered there is answered as the router answers it.
@Suite("Event routes")
struct EventPathTests {
    @Test("the plain spellings of the two event routes are read from the path's bytes")
    func plainSpellings() {
        #expect(EventPath("/api/events/abc") == .shared(token: "abc"))
        #expect(EventPath("/api/events/0123456789ab%7Cc%2Fcounter%401k") == .shared(token: "0123456789ab%7Cc%2Fcounter%401k"))
        #expect(EventPath("/api/sessions/5f0e/events/t%40x") == .session(id: "5f0e", token: "t%40x"))
    }

    @Test("every other path is left to the router: trailing or doubled slashes, other words, more parts, non-ASCII")
    func otherPaths() {
        for path in [
            "", "/", "api/events/t", "/api/events", "/api/events/", "/api/events/t/", "//api/events/t", "/api//events/t",
            "/api/events//t", "/api/events/t/u", "/API/events/t", "/api/event/t", "/api/sessions/s/events", "/api/sessions/s/events/",
            "/api/sessions//events/t", "/api/sessions/s/event/t", "/api/sessions/s/events/t/u", "/api/sessions/s/tree",
            "/api/events/caf\u{E9}", "/api/sessions/\u{1F600}/events/t", "/api/rendering",
        ] {
            #expect(EventPath(path) == nil, "\(path)")
        }
    }

    @Test("only a POST of a plain event path is matched, with the route's parameters and pattern")
    func matchedRequests() {
        var routes = EventRoutes(middlewares: [])
        let router = MethodRecordingRouter(router: Router(context: EventRoutes.Context.self), allowed: AllowedMethods())
        routes.addShared(to: router) { _, _ in Response(status: .accepted) }
        func request(_ method: HTTPRequest.Method, _ path: String) -> Request {
            Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path), body: RequestBody(buffer: ByteBuffer()))
        }
        let shared = routes.match(request(.post, "/api/events/t1"))
        #expect(shared?.pattern == "/api/events/{token}")
        #expect(shared?.parameters.get("token") == "t1")
        #expect(routes.match(request(.get, "/api/events/t1")) == nil)
        #expect(routes.match(request(.post, "/api/events/t1/")) == nil)
        // No session routes (a gateway without sessions): the router answers, 404.
        #expect(routes.match(request(.post, "/api/sessions/s/events/t")) == nil)
        routes.addSession(to: router) { _, _ in Response(status: .accepted) }
        let session = routes.match(request(.post, "/api/sessions/s1/events/t2?x=1"))
        #expect(session?.pattern == "/api/sessions/{id}/events/{token}")
        #expect(session?.parameters.get("id") == "s1")
        #expect(session?.parameters.get("token") == "t2")
    }

    @Test("an event answered before the router and one the router answers (a trailing slash) are answered alike, and counted under the route")
    func sameAnswers() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let registry = PrometheusCollectorRegistry()
        try await GatewayTesting.application(session: session, options: GatewayTesting.options(registry: registry)).test(.router) { client in
            let first = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            let token = first.rendering.add.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            // What a 202 says but the rendering it followed (`after`: one later for the second).
            struct Accepted: Decodable, Equatable { var result: String; var token: String }
            var bodies: [Accepted] = []
            for uri in ["/api/events/\(token)", "/api/events/\(token)/"] {
                try await client.execute(uri: uri, method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) { response in
                    #expect(response.status == .accepted, "\(uri)")
                    bodies.append(try GatewayTesting.decode(Accepted.self, response.body))
                }
            }
            #expect(bodies.count == 2 && bodies[0] == bodies[1], "\(bodies)")
            for uri in ["/api/events/unknown-token", "/api/events/unknown-token/"] {
                try await client.execute(uri: uri, method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) {
                    #expect($0.status == .notFound, "\(uri)")
                }
            }
            try await GatewayRouteTests.rendering(of: session, as: TallyJSON.self, "count 2") { $0.count == 2 }
        }
        let metrics = registry.emitToString()
        #expect(metrics.contains(#"workflow_gateway_requests_total{route="/api/events/{token}",status="202"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"workflow_gateway_requests_total{route="/api/events/{token}",status="404"} 2"#), "\(metrics)")
        await session.stop()
    }
}
