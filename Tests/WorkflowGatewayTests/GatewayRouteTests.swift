import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import NIOCore
import Prometheus
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowCluster
@testable import WorkflowGateway
import WorkflowRemote
import WorkflowClusterTesting

/// Every gateway route in process, through HummingbirdTesting, over a real root session.
@Suite("Gateway routes")
struct GatewayRouteTests {
    /// Waits for a rendering of `session` that decodes as `T` and satisfies `predicate`.
    static func rendering<T: Decodable & Sendable>(
        of session: any ClusterRootSession, as type: T.Type, _ what: String, where predicate: @escaping @Sendable (T) -> Bool
    ) async throws {
        try await withSafetyTimeout(what) {
            for await rendering in session.renderings() {
                if let value = try? JSONDecoder().decode(T.self, from: rendering.json), predicate(value) { return }
            }
            throw WaitFailure(description: "renderings ended before \(what)")
        }
    }

    @Test("GET /api/rendering: the latest settled rendering, sinks as tokens, with its sequence")
    func latestRendering() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.router) { client in
            try await client.execute(uri: "/api/rendering", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let envelope = try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, response.body)
                #expect(envelope.root == "tally")
                #expect(envelope.sequence == session.latestRendering.sequence)
                #expect(envelope.rendering.count == 0)
                #expect(!envelope.rendering.add.isEmpty)
                #expect(envelope.rendering.inert == nil)
            }
        }
        await session.stop()
    }

    @Test("POST /api/events/{token}: 202, and the event reaches the tree as a sink call would")
    func postEvent() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session).test(.router) { client in
            let first = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            try await client.execute(uri: "/api/events/\(first.rendering.add)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("3")) { response in
                #expect(response.status == .accepted)
                #expect(String(buffer: response.body).contains(#""result":"sent""#))
            }
            try await Self.rendering(of: session, as: TallyJSON.self, "count 3") { $0.count == 3 }
            try await client.execute(uri: "/api/rendering", method: .get) { response in
                let envelope = try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, response.body)
                #expect(envelope.rendering.count == 3)
                #expect(envelope.sequence > first.sequence)
            }
            // A browser percent-encodes the token (it holds `:`, `@`, …); the gateway decodes it.
            let current = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            let encoded = current.rendering.add.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(encoded != current.rendering.add, "the token has characters a path escapes: \(current.rendering.add)")
            try await client.execute(uri: "/api/events/\(encoded)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("2")) {
                #expect($0.status == .accepted)
            }
            try await Self.rendering(of: session, as: TallyJSON.self, "count 5") { $0.count == 5 }
        }
        await session.stop()
    }

    @Test("bad events: unknown token 404, stale token 410, bad body 400, too large 413; each a JSON error; the tree keeps serving")
    func badEvents() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        try await GatewayTesting.application(session: session, options: GatewayTesting.options(maxEventBytes: 64)).test(.router) { client in
            let first = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            try await client.execute(uri: "/api/events/no-such-token", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) { response in
                #expect(response.status == .notFound)
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "unknown-token")
            }
            for bad in [#""three""#, "{not json", ""] {
                try await client.execute(uri: "/api/events/\(first.rendering.add)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body(bad)) { response in
                    #expect(response.status == .badRequest, "body \(bad)")
                    let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                    #expect(error.error == "undecodable-event")
                    #expect(!error.message.isEmpty)
                }
            }
            let large = String(repeating: "1", count: 200)
            try await client.execute(uri: "/api/events/\(first.rendering.add)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body(large)) { response in
                #expect(response.status == .contentTooLarge)
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "too-large")
            }
            // The undo sink exists only while the count is positive: back at 0, its token is stale.
            try await client.execute(uri: "/api/events/\(first.rendering.add)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1"))
            try await Self.rendering(of: session, as: TallyJSON.self, "count 1") { $0.count == 1 }
            let one = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            let undo = try #require(one.rendering.undo)
            try await client.execute(uri: "/api/events/\(undo)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("{}")) { #expect($0.status == .accepted) }
            try await Self.rendering(of: session, as: TallyJSON.self, "count 0") { $0.count == 0 && $0.undo == nil }
            try await client.execute(uri: "/api/events/\(undo)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("{}")) { response in
                #expect(response.status == .gone)
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "stale-token")
                #expect(error.message.hasSuffix("this sink is no longer rendered: read the rendering again"), "\(error.message)")
            }
            // Still serving, and none of the refused events was applied.
            let latest = try await client.execute(uri: "/api/rendering", method: .get) {
                try GatewayTesting.decode(RenderingEnvelope<TallyJSON>.self, $0.body)
            }
            try await client.execute(uri: "/api/events/\(latest.rendering.add)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("5")) {
                #expect($0.status == .accepted)
            }
            try await Self.rendering(of: session, as: TallyJSON.self, "count 5") { $0.count == 5 }
        }
        await session.stop()
    }

    @Test("a remote child's back-pressure reaches the client as 429 with Retry-After")
    func backPressure() async throws {
        let parent = try GatewayTesting.parentRuntime(name: "gw-parent-429", maxOutstandingEvents: 2)
        let worker = try GatewayTesting.worker(named: "gw-worker-429", joining: parent)
        await parent.waitForWorkers(count: 1)
        let session = WorkflowRootSession(name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        try await Self.rendering(of: session, as: BoardJSON.self, "the worker's rendering") { $0.c.onIncrement != nil }
        let token = try #require(try JSONDecoder().decode(BoardJSON.self, from: session.latestRendering.json).c.onIncrement)
        let changes = parent.statusChanges
        await worker.shutdown()
        try await withSafetyTimeout("the child unavailable") {
            for await change in changes {
                if case .unavailable = change.status { return }
            }
        }
        try await GatewayTesting.application(session: session, runtime: parent).test(.router) { client in
            for _ in 0..<2 {
                try await client.execute(uri: "/api/events/\(token)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) { #expect($0.status == .accepted) }
            }
            try await client.execute(uri: "/api/events/\(token)", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "1")
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "refused")
            }
            try await client.execute(uri: "/api/rendering", method: .get) { #expect($0.status == .ok) }
        }
        await session.stop()
        await parent.shutdown()
    }

    @Test("GET /api/renderings streams every settled rendering over a WebSocket, in order, the latest first")
    func renderingStream() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session).test(.live) { client in
            let seen = Mutex<[RenderingEnvelope<TallyJSON>]>([])
            _ = try await withSafetyTimeout("the stream shows count 10") {
                try await client.ws("/api/renderings") { inbound, _, _ in
                    var sent = false
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        let envelope = try JSONDecoder().decode(RenderingEnvelope<TallyJSON>.self, from: Data(text.utf8))
                        seen.withLock { $0.append(envelope) }
                        if !sent {
                            sent = true
                            for _ in 0..<10 { try await session.send(event: Data("1".utf8), to: add) }
                        }
                        if envelope.rendering.count == 10 { return }
                    }
                }
            }
            let envelopes = seen.withLock { $0 }
            #expect(envelopes.first?.rendering.count == 0, "the latest rendering comes first")
            #expect(envelopes.last?.rendering.count == 10)
            let sequences = envelopes.map(\.sequence)
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "newer renderings only: \(sequences)")
            #expect(envelopes.allSatisfy { $0.root == "tally" })
        }
        await session.stop()
    }

    @Test("GET /workflow-client.js: the pages' client module, open without the bearer token; an application's own asset at that path wins")
    func clientScript() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let options = GatewayTesting.options(bearerToken: "test-token-0123456789abcdef")
        try await GatewayTesting.application(session: session, options: options).test(.router) { client in
            try await client.execute(uri: "/workflow-client.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                let source = String(buffer: response.body)
                for export in ["export class WorkflowClient", "export function connect"] { #expect(source.contains(export), "\(export)") }
            }
        }
        let own = WebAsset(path: "/workflow-client.js", contentType: "text/javascript; charset=utf-8", text: "export const own = 1;")
        try await GatewayTesting.application(session: session, options: GatewayTesting.options(assets: [own])).test(.router) { client in
            try await client.execute(uri: "/workflow-client.js", method: .get) { #expect(String(buffer: $0.body) == "export const own = 1;") }
        }
        await session.stop()
    }

    @Test("with a bearer token: API 401 without it, 200 with it (header, or access_token for the stream); probes and pages open")
    func bearerToken() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let token = "test-token-0123456789abcdef"
        let page = WebAsset(path: "/", contentType: "text/html; charset=utf-8", text: "<p>page</p>")
        let options = GatewayTesting.options(bearerToken: token, assets: [page])
        try await GatewayTesting.application(session: session, options: options).test(.live) { client in
            for uri in ["/api/rendering", "/api/tree", "/metrics"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .unauthorized, "\(uri)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "unauthorized")
                }
                try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer wrong-token-0123456789"]) {
                    #expect($0.status == .unauthorized, "\(uri)")
                }
                try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) {
                    #expect($0.status == .ok, "\(uri)")
                }
            }
            try await client.execute(uri: "/api/events/x", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("1")) { #expect($0.status == .unauthorized) }
            for uri in ["/health/live", "/health/ready", "/", "/inspector"] {
                try await client.execute(uri: uri, method: .get) { #expect($0.status == .ok, "\(uri)") }
            }
            let received = Mutex(false)
            _ = try await withSafetyTimeout("the stream with access_token") {
                try await client.ws("/api/renderings?access_token=\(token)") { inbound, _, _ in
                    for try await _ in inbound.messages(maxSize: 1 << 20) {
                        received.withLock { $0 = true }
                        return
                    }
                }
            }
            #expect(received.withLock { $0 })
        }
        await session.stop()
    }

    @Test("the application's assets and the inspector page are served with their content types")
    func assets() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let page = WebAsset(path: "/", contentType: "text/html; charset=utf-8", text: "<p>the app</p>")
        let script = WebAsset(path: "/app.js", contentType: "text/javascript; charset=utf-8", text: "console.log(1)")
        try await GatewayTesting.application(session: session, options: GatewayTesting.options(assets: [page, script])).test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(String(buffer: response.body) == "<p>the app</p>")
            }
            try await client.execute(uri: "/app.js", method: .get) { #expect($0.headers[.contentType] == "text/javascript; charset=utf-8") }
            try await client.execute(uri: "/inspector", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("/api/tree"))
            }
            try await client.execute(uri: "/no-such-page", method: .get) { #expect($0.status == .notFound) }
        }
        await session.stop()
    }

    @Test("the event error mapping: each RootEventError has its status")
    func errorMapping() {
        #expect(GatewayRoutes.response(for: .unknownToken("t")).status == .notFound)
        #expect(GatewayRoutes.response(for: .staleToken("t")).status == .gone)
        #expect(GatewayRoutes.response(for: .undecodableEvent(token: "t", reason: "r")).status == .badRequest)
        #expect(GatewayRoutes.response(for: .refused(token: "t")).status == .tooManyRequests)
    }
}
