import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import NIOCore
import ClusterTestSupport
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowCluster
@testable import WorkflowGateway
import WorkflowRemote
import WorkflowClusterTesting

/// Sessions through the gateway, in process: a tree per client on one parent runtime with an
/// in-process worker, beside the shared root.
@Suite("Gateway sessions")
struct SessionRouteTests {
    /// A counter board whose step comes from its session's props (`{"step": N}`; none: 1).
    struct BoardProps: Decodable, Sendable {
        var step: Int
        init(from decoder: any Decoder) throws {
            enum Keys: String, CodingKey { case step }
            step = try decoder.container(keyedBy: Keys.self).decodeIfPresent(Int.self, forKey: .step) ?? 1
        }
    }

    struct Created: Decodable {
        var session: String
        var root: String
    }

    struct Listing: Decodable {
        struct Summary: Decodable {
            var label: String
            var root: String
            var state: String
        }
        var sessions: [Summary]
    }

    typealias Envelope = RenderingEnvelope<BoardJSON>

    /// A parent with one in-process worker, the shared board and a directory of board sessions.
    struct Fixture {
        let parent: RemoteRuntime
        let worker: RemoteRuntime
        let shared: WorkflowRootSession<CounterBoardWorkflow>
        let directory: SessionDirectory

        /// With `store`, the directory commits its sessions there and resumes those it holds.
        /// With `spread`, its sessions are shared with other directories through the spread store.
        init(
            _ name: String, settings: SessionSettings = SessionSettings(), store: OpenedCoordinatorStore? = nil, spread: SessionSpread? = nil
        ) async throws {
            let counter = CounterWorkflow.workflowTypeName
            let placement = PlacementTable(rules: [.init(pattern: counter, placement: .worker("\(name)-worker"))])
            parent = try GatewayTesting.parentRuntime(name: "\(name)-parent", placement: placement)
            worker = try GatewayTesting.worker(named: "\(name)-worker", joining: parent)
            await parent.waitForWorkers(count: 1)
            shared = WorkflowRootSession(
                name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), loop: parent)
            let registry = RootWorkflowRegistry().registering("board", props: BoardProps.self) { props in
                CounterBoardWorkflow(counters: [.init(key: "c", step: props.step)], placement: .configured)
            }
            directory = SessionDirectory(
                registry: registry, runtime: parent, settings: settings, logger: GatewayTesting.quietLogger, store: store, spread: spread)
        }

        func application(options: GatewayOptions = GatewayTesting.options()) -> some ApplicationProtocol {
            GatewayTesting.application(session: shared, runtime: parent, options: options, sessions: directory)
        }

        func stop() async {
            await directory.stopAll()
            await shared.stop()
            await worker.shutdown()
            await parent.shutdown()
        }
    }

    static func create(_ client: some TestClientProtocol, body: String = "{}") async throws -> String {
        try await client.execute(uri: "/api/sessions", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body(body)) { response in
            #expect(response.status == .created, "\(String(buffer: response.body))")
            return try GatewayTesting.decode(Created.self, response.body).session
        }
    }

    /// Waits (on the session's own stream) until its counter is rendered by the worker with
    /// `count`, then reads the session's rendering through the gateway.
    static func rendering(_ client: some TestClientProtocol, _ fixture: Fixture, _ id: String, count: Int) async throws -> Envelope {
        let sessionID = try #require(SessionID(id))
        let shown = try await withSafetyTimeout("session \(id.prefix(6)) showing count \(count)") {
            try await fixture.directory.use(sessionID) { session in
                for await rendering in session.renderings() {
                    if let board = try? JSONDecoder().decode(BoardJSON.self, from: rendering.json), board.c.count == count, board.c.onIncrement != nil {
                        return true
                    }
                }
                return false
            }
        }
        #expect(shown)
        return try await client.execute(uri: "/api/sessions/\(id)/rendering", method: .get) { try GatewayTesting.decode(Envelope.self, $0.body) }
    }

    static func post(_ client: some TestClientProtocol, _ uri: String, _ body: String = "1") async throws -> (HTTPResponse.Status, String) {
        try await client.execute(uri: uri, method: .post, headers: GatewayTesting.json, body: GatewayTesting.body(body)) {
            ($0.status, String(buffer: $0.body))
        }
    }

    @Test("a session's rendering answers If-None-Match with 304; its stream sends changes after a first whole frame, and a reconnection resumes with changes")
    func sessionDeltasAndConditionalReads() async throws {
        let fixture = try await Fixture("gw-sess-delta")
        try await fixture.application().test(.live) { client in
            let id = try await Self.create(client)
            let first = try await Self.rendering(client, fixture, id, count: 0)
            let token = try #require(first.rendering.c.onIncrement)
            let tag = "\"\(first.sequence)\""
            try await client.execute(uri: "/api/sessions/\(id)/rendering", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .notModified && response.headers[.eTag] == tag)
            }
            let applied = Mutex(RenderingDeltaStreamTests.Applied())
            _ = try await withSafetyTimeout("a whole frame, then changes") {
                try await client.ws("/api/sessions/\(id)/renderings?deltas=1") { inbound, outbound, _ in
                    var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    var stream = RenderingDeltaStreamTests.Applied()
                    let sequence = try stream.apply(try #require(try await iterator.next()))
                    try await outbound.write(.text(#"{"ack":\#(sequence)}"#))
                    let (status, _) = try await Self.post(client, "/api/sessions/\(id)/events/\(Self.escaped(token))", "2")
                    #expect(status == .accepted)
                    while !stream.rendering.bytesText.contains(#""count":2"#) {
                        _ = try stream.apply(try #require(try await iterator.next()))
                    }
                    applied.withLock { $0 = stream }
                }
            }
            let seen = applied.withLock { $0 }
            #expect(seen.whole == 1 && seen.deltas >= 1, "one whole frame, then changes")
            try await client.execute(uri: "/api/sessions/\(id)/rendering", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .ok, "the client's sequence is no longer the latest")
            }
            let resumed = try await RenderingDeltaStreamTests.firstMessage(
                client, "deltas=1&since=\(seen.sequence)&run=\(seen.run)", path: "/api/sessions/\(id)/renderings", to: seen)
            #expect(resumed.whole == 1 && resumed.deltas == seen.deltas + 1, "resumed with changes (none missed)")
        }
        await fixture.stop()
    }

    @Test("two sessions are two trees: an event in one changes only it, each has its own remote child, tokens never cross")
    func sessionsAreIsolated() async throws {
        let fixture = try await Fixture("gw-sess-iso")
        try await fixture.application().test(.router) { client in
            let first = try await Self.create(client)
            let second = try await Self.create(client, body: #"{"root": "board", "props": {"step": 10}}"#)
            #expect(first != second && first.count == 32 && second.count == 32)
            let one = try await Self.rendering(client, fixture, first, count: 0)
            let two = try await Self.rendering(client, fixture, second, count: 0)
            let firstToken = try #require(one.rendering.c.onIncrement)
            let secondToken = try #require(two.rendering.c.onIncrement)

            let (status, _) = try await Self.post(client, "/api/sessions/\(first)/events/\(Self.escaped(firstToken))", "2")
            #expect(status == .accepted)
            _ = try await Self.rendering(client, fixture, first, count: 2)
            _ = try await Self.post(client, "/api/sessions/\(second)/events/\(Self.escaped(secondToken))", "1")
            _ = try await Self.rendering(client, fixture, second, count: 10)
            #expect(try await Self.rendering(client, fixture, first, count: 2).rendering.c.count == 2, "the first session is unchanged")

            // A token of one tree is unknown in another (and in the shared root).
            let (crossed, crossedBody) = try await Self.post(client, "/api/sessions/\(second)/events/\(Self.escaped(firstToken))")
            #expect(crossed == .notFound && crossedBody.contains("unknown-token"), "\(crossedBody)")
            let (shared, _) = try await Self.post(client, "/api/events/\(Self.escaped(firstToken))")
            #expect(shared == .notFound)

            // Each session's child is a child of its own on the runtime; the shared root's too.
            let children = await fixture.parent.inspect().children.map(\.path)
            #expect(children.count == 3, "\(children)")
            #expect(children.contains { $0.hasPrefix("/~\(first)/") } && children.contains { $0.hasPrefix("/~\(second)/") })
            // One tree's inspection reads that tree's children only (what each rendering message
            // asks for: its cost must not grow with the other sessions').
            let firstOnly = await fixture.parent.inspect(tree: SessionLoop.pathPrefix(scope: first)).children.map(\.path)
            #expect(firstOnly.count == 1 && firstOnly.allSatisfy { $0.hasPrefix("/~\(first)/") }, "\(firstOnly)")
            let sharedOnly = await fixture.parent.inspect(tree: "").children.map(\.path)
            #expect(sharedOnly.count == 1 && sharedOnly.allSatisfy { !$0.hasPrefix("/~") }, "\(sharedOnly)")
            // Each message carries its own tree's children only, by the tree's own paths.
            #expect(one.children.count == 1 && !(one.children.first?.path.hasPrefix("/~") ?? true), "\(one.children)")
            let tree = try await client.execute(uri: "/api/sessions/\(first)/tree", method: .get) { try GatewayTesting.decode(TreeJSON.self, $0.body) }
            #expect(tree.nodes.count == 1 && tree.nodes.first?.status == "running", "\(tree.nodes)")

            let sharedTree = try await client.execute(uri: "/api/tree", method: .get) { try GatewayTesting.decode(TreeJSON.self, $0.body) }
            let labels: Set<String> = [String(first.prefix(8)), String(second.prefix(8))]
            #expect(Set(sharedTree.sessions?.map(\.label) ?? []) == labels, "the shared root's inspection lists the sessions by label")
            #expect(sharedTree.nodes.count == 1, "and its own tree only: \(sharedTree.nodes.map(\.path))")
            let listing = try await client.execute(uri: "/api/sessions", method: .get) { try GatewayTesting.decode(Listing.self, $0.body) }
            #expect(Set(listing.sessions.map(\.label)) == labels && listing.sessions.allSatisfy { $0.state == "active" && $0.root == "board" })
            let listed = try await client.execute(uri: "/api/sessions", method: .get) { String(buffer: $0.body) }
            #expect(!listed.contains(first) && !listed.contains(second), "ids, which reach a session, are never listed")
        }
        await fixture.stop()
    }

    @Test("a passivated session comes back with its state, its remote child's included, on its next request; an open stream keeps it active")
    func passivationKeepsState() async throws {
        let fixture = try await Fixture("gw-sess-passive", settings: SessionSettings(idleTimeout: .zero))
        try await fixture.application().test(.live) { client in
            let id = try await Self.create(client)
            let token = try #require(try await Self.rendering(client, fixture, id, count: 0).rendering.c.onIncrement)
            _ = try await Self.post(client, "/api/sessions/\(id)/events/\(Self.escaped(token))", "3")
            let before = try await Self.rendering(client, fixture, id, count: 3)

            #expect(await fixture.directory.passivateIdle() == 1)
            #expect(await fixture.directory.counts == (active: 0, passivated: 1))
            // Its remote child stopped on the worker with it.
            #expect(await fixture.parent.inspect().children.allSatisfy { !$0.path.hasPrefix("/~\(id)") })

            let after = try await Self.rendering(client, fixture, id, count: 3)
            #expect(after.sequence > before.sequence, "numbering continues: \(before.sequence) then \(after.sequence)")
            #expect(await fixture.directory.counts == (active: 1, passivated: 0))
            let newToken = try #require(after.rendering.c.onIncrement)
            _ = try await Self.post(client, "/api/sessions/\(id)/events/\(Self.escaped(newToken))", "1")
            _ = try await Self.rendering(client, fixture, id, count: 4)

            // A client watching the stream holds the session: it is not passivated.
            _ = try await withSafetyTimeout("a stream holding the session") {
                try await client.ws("/api/sessions/\(id)/renderings") { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        let envelope = try JSONDecoder().decode(Envelope.self, from: Data(text.utf8))
                        #expect(envelope.rendering.c.count == 4)
                        #expect(await fixture.directory.passivateIdle() == 0)
                        return
                    }
                }
            }
        }
        await fixture.stop()
    }

    @Test("bad input: an unknown or forged id is 404 unknown-session; bad props 400; a body too large 413; DELETE ends a session")
    func badInput() async throws {
        let fixture = try await Fixture("gw-sess-bad")
        try await fixture.application().test(.router) { client in
            for id in ["0123456789abcdef0123456789abcdef", "not-an-id", "../../api/tree", String(repeating: "f", count: 33)] {
                try await client.execute(uri: "/api/sessions/\(id)/rendering", method: .get) { response throws in
                    #expect(response.status == .notFound, "\(id)")
                    if id.count == 32 { #expect(try GatewayTesting.decode(ErrorBody.self, response.body).error == "unknown-session") }
                }
            }
            let (unknownRoot, unknownBody) = try await Self.post(client, "/api/sessions", #"{"root": "nope"}"#)
            #expect(unknownRoot == .badRequest && unknownBody.contains("unknown-root"), "\(unknownBody)")
            let (badProps, badPropsBody) = try await Self.post(client, "/api/sessions", #"{"props": {"step": "ten"}}"#)
            #expect(badProps == .badRequest && badPropsBody.contains("undecodable-props"), "\(badPropsBody)")
            let (notJSON, _) = try await Self.post(client, "/api/sessions", "[1, 2")
            #expect(notJSON == .badRequest)
            let large = #"{"props": {"pad": ""# + String(repeating: "x", count: 2 << 20) + #""}}"#
            let (tooLarge, _) = try await Self.post(client, "/api/sessions", large)
            #expect(tooLarge == .contentTooLarge)

            let id = try await Self.create(client)
            try await client.execute(uri: "/api/sessions/\(id)", method: .delete) { #expect($0.status == .noContent) }
            try await client.execute(uri: "/api/sessions/\(id)/rendering", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/api/sessions/\(id)", method: .delete) { #expect($0.status == .notFound) }
            #expect(await fixture.directory.counts == (active: 0, passivated: 0))
        }
        await fixture.stop()
    }

    @Test("limits: beyond max_sessions 503 too-many-sessions, beyond the creation rate 429 too-many-creations, each with Retry-After")
    func limits() async throws {
        let fixture = try await Fixture("gw-sess-limit", settings: SessionSettings(maxSessions: 2, maxCreationsPerSecond: 1000))
        try await fixture.application().test(.router) { client in
            _ = try await Self.create(client)
            _ = try await Self.create(client)
            try await client.execute(uri: "/api/sessions", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("{}")) { response throws in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] != nil)
                #expect(try GatewayTesting.decode(ErrorBody.self, response.body).error == "too-many-sessions")
            }
        }
        await fixture.stop()
        // A budget of one creation, refilled once in 1,000 seconds: the second creation is refused.
        let slow = try await Fixture("gw-sess-rate", settings: SessionSettings(maxCreationsPerSecond: 0.001))
        try await slow.application().test(.router) { client in
            _ = try await Self.create(client)
            try await client.execute(uri: "/api/sessions", method: .post, headers: GatewayTesting.json, body: GatewayTesting.body("{}")) { response throws in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "1")
                #expect(try GatewayTesting.decode(ErrorBody.self, response.body).error == "too-many-creations")
            }
        }
        await slow.stop()
    }

    @Test("creations at once never pass max_sessions: the directory serves others while one starts, and counts those under way")
    func concurrentCreationsKeepTheLimit() async throws {
        let fixture = try await Fixture("gw-sess-concurrent", settings: SessionSettings(maxSessions: 4, maxCreationsPerSecond: 1000))
        let directory = fixture.directory
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do throws(SessionError) {
                        _ = try await directory.create(root: "board", props: Data("{}".utf8))
                        return true
                    } catch {
                        #expect(error == .tooManySessions(limit: 4))
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 4)
        #expect(await directory.counts == (active: 4, passivated: 0))
        await fixture.stop()
    }

    static func escaped(_ token: String) -> String {
        token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
    }
}
