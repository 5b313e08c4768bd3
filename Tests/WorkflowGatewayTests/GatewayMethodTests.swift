import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import NIOCore
import NIOWebSocket
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowClusterTesting
import WorkflowCluster
@testable import WorkflowGateway

/// What HTTP says about methods, media types and upgrades, on the gateway's routes.
@Suite("Gateway methods, media types and upgrades")
struct GatewayMethodTests {
    @Test("a wrong method on a known path: 405 with Allow; HEAD of a GET route: its head, no body; unknown path: 404")
    func methodNotAllowed() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.router) { client in
            let cases: [(String, HTTPRequest.Method, String)] = [
                ("/health/live", .post, "GET, HEAD"),
                ("/health/ready", .delete, "GET, HEAD"),
                ("/api/rendering", .put, "GET, HEAD"),
                ("/api/events/some-token", .get, "POST"),
                ("/metrics", .post, "GET, HEAD"),
            ]
            for (uri, method, allow) in cases {
                try await client.execute(uri: uri, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                    #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                    let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                    #expect(error.error == "method-not-allowed")
                }
            }
            try await client.execute(uri: "/health/live", method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/no/such/path", method: .post) { #expect($0.status == .notFound) }
        }
        await session.stop()
    }

    @Test("GET /api/renderings without a WebSocket upgrade: 426 with Upgrade: websocket")
    func renderingsWithoutUpgrade() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.router) { client in
            try await client.execute(uri: GatewayRoutes.renderingsPath, method: .get) { response in
                #expect(response.status == .upgradeRequired)
                #expect(response.headers[.upgrade] == "websocket")
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "upgrade-required")
            }
        }
        await session.stop()
    }

    @Test("an event must be JSON: another or no Content-Type is 415 and nothing is applied; JSON with parameters is accepted")
    func eventsRequireJSON() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.router) { client in
            let first = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            let uri = "/api/events/\(first.rendering.add)"
            for headers: HTTPFields in [[:], [.contentType: "text/plain"], [.contentType: "application/x-www-form-urlencoded"]] {
                try await client.execute(uri: uri, method: .post, headers: headers, body: GatewayTesting.body("5")) { response in
                    #expect(response.status == .unsupportedMediaType, "\(headers)")
                    #expect(response.headers[.accept] == "application/json")
                    let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                    #expect(error.error == "unsupported-media-type")
                }
            }
            for type in ["application/json; charset=utf-8", "Application/JSON", "application/vnd.tally+json"] {
                try await client.execute(uri: uri, method: .post, headers: [.contentType: type], body: GatewayTesting.body("1")) {
                    #expect($0.status == .accepted, "\(type)")
                }
            }
            try await GatewayRouteTests.rendering(of: session, as: TallyJSON.self, "count 3") { $0.count == 3 }
        }
        await session.stop()
    }

    @Test("a WebSocket text frame that is not UTF-8 closes the stream with 1007")
    func invalidUTF8Frame() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.live) { client in
            let close = try await withSafetyTimeout("the stream to close") {
                try await client.ws(GatewayRoutes.renderingsPath) { inbound, outbound, _ in
                    try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: [0xC3, 0x28, 0xFF]))))
                    for try await _ in inbound.messages(maxSize: 1 << 20) {}
                }
            }
            #expect(close?.closeCode == .dataInconsistentWithMessage)
        }
        await session.stop()
    }

    @Test("JSON media types: application/json and +json types, any parameters and case")
    func jsonMediaType() {
        #expect(JSONMediaType.matches("application/json"))
        #expect(JSONMediaType.matches("application/json;charset=utf-8"))
        #expect(JSONMediaType.matches("application/problem+json"))
        #expect(!JSONMediaType.matches(nil))
        #expect(!JSONMediaType.matches("text/json-ish"))
        #expect(!JSONMediaType.matches("application/jsonp"))
        #expect(JSONMediaType.matches(" Application/JSON ; charset=UTF-8"))
        #expect(JSONMediaType.matches("application/vnd.api+JSON\t"))
        #expect(!JSONMediaType.matches("application/+json"))
        #expect(!JSONMediaType.matches("text/plain+json"))
        #expect(!JSONMediaType.matches(""))
        #expect(!JSONMediaType.matches("application/json x"))
    }
}
