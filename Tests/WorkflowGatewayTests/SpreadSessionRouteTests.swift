import ClusterTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import Logging
import Testing
import WorkflowCluster
import WorkflowClusterTesting
import WorkflowGateway

/// Sessions spread over two coordinators (two directories, each with its own runtime and worker,
/// through two gateways) sharing one private PostgreSQL server: a request for the other's session
/// is redirected to it; once its lease runs out unrenewed, the session is taken over from the
/// store with its state; and the deposed owner's late writes are refused by the session's token.
@Suite("Gateway sessions spread over coordinators")
struct SpreadSessionRouteTests {
    /// The lease: long enough that the owner's renewals (tasks of the test process's concurrency
    /// pool, shared with every test running beside) are never late on a saturated machine while
    /// the test expects redirects; a takeover by expiry waits for it once.
    static let lease: Duration = .seconds(5)

    /// An answer that ends a wait at once: the test's scenario cannot go on from it.
    struct UnexpectedAnswer: Error, CustomStringConvertible {
        var description: String
    }

    /// Coordinator `holder`'s part in the spread sessions of the database at `url`, taking leases
    /// of `lease`.
    static func spread(_ url: String, holder: String, lease: Duration = Self.lease, advertisedURL: String? = nil) async throws -> SessionSpread {
        let store = try await PostgresCoordinatorStore.open(url: url, fencesSessionsByLease: true, logger: GatewayTesting.quietLogger)
        return SessionSpread(
            store: store, holder: holder, settings: SessionSpreadSettings(lease: lease, advertisedURL: advertisedURL ?? "http://\(holder).test:8080"))
    }

    static func execute(
        _ client: some TestClientProtocol, _ uri: String, _ method: HTTPRequest.Method, body: String? = nil, origin: String? = nil
    ) async throws -> (status: HTTPResponse.Status, location: String?, text: String, allowedOrigin: String?) {
        var headers = GatewayTesting.json
        if let origin { headers[.origin] = origin }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body.map(GatewayTesting.body)) {
            ($0.status, $0.headers[.location], String(buffer: $0.body), $0.headers[.accessControlAllowOrigin])
        }
    }

    /// Two coordinators' gateways over the spread sessions of one private PostgreSQL server, `a`
    /// advertising `advertisedA` and served in process, `b` served on a real socket (its streams
    /// are read over WebSockets) with `optionsB`; both renew their leases until `body` cancels
    /// A's keeper (the third argument). Everything is stopped and closed whatever `body` does.
    static func withPair(
        _ name: String, advertisedA: String? = nil, optionsB: GatewayOptions = GatewayTesting.options(),
        _ body: @Sendable (SessionRouteTests.Fixture, any TestClientProtocol, Task<Void, Never>, SessionRouteTests.Fixture, any TestClientProtocol) async throws -> Void
    ) async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions test skipped: \(reason)") }
        try await PrivatePostgres.with { server in
            let spreadA = try await Self.spread(server.url, holder: "a", advertisedURL: advertisedA)
            let spreadB = try await Self.spread(server.url, holder: "b")
            let a = try await SessionRouteTests.Fixture("\(name)-a", spread: spreadA)
            let b = try await SessionRouteTests.Fixture("\(name)-b", spread: spreadB)
            let keeperA = Task { await a.directory.run() }
            let keeperB = Task { await b.directory.run() }
            // The test's client keeps one connection to B: a step that is slow on a loaded machine
            // (seen: a minute) must not let B close it as idle under the test (`I/O on closed channel`).
            var patientB = optionsB
            patientB.limits.idleTimeout = .seconds(600)
            let optionsB = patientB
            let outcome: Result<Void, any Error>
            do {
                try await a.application().test(.router) { clientA in
                    try await b.application(options: optionsB).test(.live) { clientB in
                        try await body(a, clientA, keeperA, b, clientB)
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            keeperA.cancel()
            keeperB.cancel()
            await a.stop()
            await b.stop()
            await spreadA.store.close()
            await spreadB.store.close()
            try outcome.get()
        }
    }

    @Test(
        "a request for the other coordinator's session is redirected (307 to its gateway, path and query kept; its stream closed naming it); once its owner stops renewing, the session is taken over with its state and the old owner's writes are refused (503 not-durable)"
    )
    func redirectTakeoverAndFencing() async throws {
        try await Self.withPair("gw-spread") { a, clientA, keeperA, b, clientB in
            try await Self.scenario(a: a, clientA: clientA, keeperA: keeperA, b: b, clientB: clientB)
        }
    }

    @Test(
        "behind a reverse proxy: the owner advertised with the proxy's path prefix is where the others redirect (307, prefix then path) and where its stream's close reason points; a page of an allowed origin can read the redirect"
    )
    func redirectToPrefixedOwner() async throws {
        let owner = "http://proxy.test/coordinators/a"
        var options = GatewayTesting.options()
        options.allowedOrigins = [try #require(GatewayOrigin(parsing: "http://proxy.test"))]
        try await Self.withPair("gw-prefix", advertisedA: owner, optionsB: options) { _, clientA, _, _, clientB in
            let id = try await SessionRouteTests.create(clientA)
            let read = try await Self.execute(clientB, "/api/sessions/\(id)/rendering", .get, origin: "http://proxy.test")
            #expect(read.status == .temporaryRedirect && read.location == owner + "/api/sessions/\(id)/rendering", "\(read)")
            #expect(read.allowedOrigin == "http://proxy.test", "the page may read it")
            let stranger = try await Self.execute(clientB, "/api/sessions/\(id)/rendering", .get, origin: "http://elsewhere.test")
            #expect(stranger.status == .temporaryRedirect && stranger.allowedOrigin == nil, "\(stranger)")
            let closed = try await withSafetyTimeout("B closing the stream of A's session") {
                try await clientB.ws("/api/sessions/\(id)/renderings") { inbound, _, _ in
                    for try await _ in inbound.messages(maxSize: 1 << 20) {}
                }
            }
            #expect(closed?.reason == "session-elsewhere " + owner, "\(String(describing: closed))")
        }
    }

    static func scenario(
        a: SessionRouteTests.Fixture, clientA: some TestClientProtocol, keeperA: Task<Void, Never>,
        b: SessionRouteTests.Fixture, clientB: some TestClientProtocol
    ) async throws {
        let id = try await SessionRouteTests.create(clientA)
        let first = try #require(try await SessionRouteTests.rendering(clientA, a, id, count: 0).rendering.c.onIncrement)
        #expect(try await SessionRouteTests.post(clientA, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(first))", "1").0 == .accepted)
        let before = try await SessionRouteTests.rendering(clientA, a, id, count: 1)

        // Every route of A's session, asked of B: redirected to A, nothing taken.
        let read = try await Self.execute(clientB, "/api/sessions/\(id)/rendering?view=1", .get)
        #expect(read.status == .temporaryRedirect && read.location == "http://a.test:8080/api/sessions/\(id)/rendering?view=1", "\(read)")
        #expect(read.text.contains("session-elsewhere"), "\(read.text)")
        let eventPath = "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(first))"
        let event = try await Self.execute(clientB, eventPath, .post, body: "1")
        #expect(event.status == .temporaryRedirect && event.location == "http://a.test:8080" + eventPath, "\(event)")
        let end = try await Self.execute(clientB, "/api/sessions/\(id)", .delete)
        #expect(end.status == .temporaryRedirect, "\(end)")
        // A WebSocket handshake cannot be redirected: the stream closes at once, naming the owner.
        let closed = try await withSafetyTimeout("B closing the stream of A's session") {
            try await clientB.ws("/api/sessions/\(id)/renderings") { inbound, _, _ in
                for try await _ in inbound.messages(maxSize: 1 << 20) {}
            }
        }
        #expect(closed?.reason == "session-elsewhere http://a.test:8080", "\(String(describing: closed))")
        #expect(await b.directory.counts == (active: 0, passivated: 0))
        // An id neither holds: unknown on both.
        let forged = "0123456789abcdef0123456789abcdef"
        #expect(try await Self.execute(clientB, "/api/sessions/\(forged)/rendering", .get).status == .notFound)
        #expect(try await Self.execute(clientA, "/api/sessions/\(forged)/rendering", .get).status == .notFound)

        // A stops renewing (as if frozen or cut off) and keeps serving from memory: once its
        // lease runs out by the database's clock, B's next request takes the session over.
        keeperA.cancel()
        await keeperA.value
        let taken = try await withSafetyTimeout("B taking the session over once A's lease runs out") { () -> String in
            while true {
                let answer = try await Self.execute(clientB, "/api/sessions/\(id)/rendering", .get)
                if answer.status == .ok { return answer.text }
                guard answer.status == .temporaryRedirect else {
                    throw UnexpectedAnswer(description: "B answered neither the session nor a redirect to A: \(answer)")
                }
                // Waiting for the database's clock to pass the lease's expiry.
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let resumed = try DurableSessionRouteTests.envelope(taken)
        #expect(await b.directory.counts == (active: 1, passivated: 0))
        _ = try await SessionRouteTests.rendering(clientB, b, id, count: 1)
        #expect(resumed.sequence >= before.sequence, "the sequence continues: \(before.sequence) then \(resumed.sequence)")

        // A, deposed without knowing it, accepts nothing more: its commit is refused.
        let stale = try #require(try await SessionRouteTests.rendering(clientA, a, id, count: 1).rendering.c.onIncrement)
        let refused = try await SessionRouteTests.post(clientA, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(stale))", "1")
        #expect(refused.0 == .serviceUnavailable && refused.1.contains("not-durable"), "\(refused)")

        // B's state is the session's: A's refused event is nowhere, B's own events apply.
        let token = try #require(try await SessionRouteTests.rendering(clientB, b, id, count: 1).rendering.c.onIncrement)
        #expect(try await SessionRouteTests.post(clientB, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(token))", "1").0 == .accepted)
        _ = try await SessionRouteTests.rendering(clientB, b, id, count: 2)
        // Ended on B, the owner: gone from the store, unknown to both.
        #expect(try await Self.execute(clientB, "/api/sessions/\(id)", .delete).status == .noContent)
        #expect(try await Self.execute(clientB, "/api/sessions/\(id)/rendering", .get).status == .notFound)
    }
}
