import ClusterTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// Spread sessions changing hands without waiting for a lease to run out, against a private
/// PostgreSQL server: a lease given up (a passivation, a coordinator stopping) lets another
/// coordinator serve the session at its next request, and an owner whose lease term ended stops
/// its sessions at its next renewal.
@Suite("Gateway spread sessions changing hands")
struct SpreadSessionHandOverTests {
    typealias Spread = SpreadSessionRouteTests

    @Test(
        "a lease given up hands the session over at once (passivated, or its coordinator stopping: the other serves it at the next request with its state); an owner whose lease term ended stops its sessions at its next renewal"
    )
    func handOver() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions test skipped: \(reason)") }
        try await PrivatePostgres.with { server in
            let spreadA = try await Spread.spread(server.url, holder: "a")
            // B runs no keeper: its leases must outlast the test on a loaded machine, or A could
            // take a session back once B's lease ran out, rightly, where the test expects B's.
            let spreadB = try await Spread.spread(server.url, holder: "b", lease: .seconds(600))
            let spreadC = try await Spread.spread(server.url, holder: "c")
            // A fourth connection, an operator's: ends A's lease term behind its back.
            let operatorStore = try await PostgresCoordinatorStore.open(url: server.url, fencesSessionsByLease: true, logger: GatewayTesting.quietLogger)
            let a = try await SessionRouteTests.Fixture("gw-spread-ha", spread: spreadA)
            let b = try await SessionRouteTests.Fixture("gw-spread-hb", spread: spreadB)
            // Passivated by the test (it runs no keeper), as soon as no client holds a session.
            let c = try await SessionRouteTests.Fixture("gw-spread-hc", settings: SessionSettings(idleTimeout: .zero), spread: spreadC)
            let keeperA = Task { await a.directory.run() }
            let outcome: Result<Void, any Error>
            do {
                try await a.application().test(.router) { clientA in
                    try await b.application().test(.router) { clientB in
                        try await c.application().test(.router) { clientC in
                            try await Self.lostLease(a: a, clientA: clientA, clientB: clientB, operatorStore: operatorStore)
                            try await Self.passivation(c: c, clientC: clientC, clientB: clientB)
                            try await Self.stopping(a: a, clientA: clientA, clientB: clientB)
                        }
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            keeperA.cancel()
            await a.stop()
            await b.stop()
            await c.stop()
            for store in [spreadA.store, spreadB.store, spreadC.store] { await store.close() }
            await operatorStore.close()
            try outcome.get()
        }
    }

    /// A's lease term ended behind its back (as when A was paused past its lease, or an operator
    /// ends it) and its session taken by B: A's next renewal finds the term ended and stops every
    /// session there; A then redirects to B.
    static func lostLease(
        a: SessionRouteTests.Fixture, clientA: some TestClientProtocol, clientB: some TestClientProtocol, operatorStore: PostgresCoordinatorStore
    ) async throws {
        let lost = try await SessionRouteTests.create(clientA)
        let token = try #require(try await SessionRouteTests.rendering(clientA, a, lost, count: 0).rendering.c.onIncrement)
        #expect(try await SessionRouteTests.post(clientA, "/api/sessions/\(lost)/events/\(SessionRouteTests.escaped(token))", "1").0 == .accepted)
        _ = try await SessionRouteTests.rendering(clientA, a, lost, count: 1)
        #expect(try await Spread.execute(clientB, "/api/sessions/\(lost)/rendering", .get).status == .temporaryRedirect)
        // A new term begun under A's name ends A's own at once.
        let operatorTerm = try await operatorStore.beginSessionLeaseTerm(holder: "a", gateway: "http://a.test:8080", for: Spread.lease)
        try await operatorStore.endSessionLeaseTerm(operatorTerm)
        let (taken, text) = try await DurableSessionRouteTests.get(clientB, "/api/sessions/\(lost)/rendering")
        #expect(taken == .ok && (try? DurableSessionRouteTests.envelope(text))?.rendering.c.count == 1, "\(taken) \(text)")
        try await withSafetyTimeout("A stopping the sessions of its ended term") {
            while await a.directory.counts.active > 0 {
                // Waiting for A's next renewal (every third of the lease).
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let redirected = try await Spread.execute(clientA, "/api/sessions/\(lost)/rendering", .get)
        #expect(redirected.status == .temporaryRedirect && redirected.location?.hasPrefix("http://b.test:8080/") == true, "\(redirected)")
    }

    /// Passivated on C: its lease given up and the session forgotten there; B serves it at once
    /// with its state, and C then redirects to B.
    static func passivation(c: SessionRouteTests.Fixture, clientC: some TestClientProtocol, clientB: some TestClientProtocol) async throws {
        let idle = try await SessionRouteTests.create(clientC)
        let token = try #require(try await SessionRouteTests.rendering(clientC, c, idle, count: 0).rendering.c.onIncrement)
        #expect(try await SessionRouteTests.post(clientC, "/api/sessions/\(idle)/events/\(SessionRouteTests.escaped(token))", "2").0 == .accepted)
        _ = try await SessionRouteTests.rendering(clientC, c, idle, count: 2)
        #expect(try await Spread.execute(clientB, "/api/sessions/\(idle)/rendering", .get).status == .temporaryRedirect)
        #expect(await c.directory.passivateIdle() == 1)
        #expect(await c.directory.counts == (active: 0, passivated: 0), "a passivated spread session is no coordinator's")
        let (handed, text) = try await DurableSessionRouteTests.get(clientB, "/api/sessions/\(idle)/rendering")
        #expect(handed == .ok && (try? DurableSessionRouteTests.envelope(text))?.rendering.c.count == 2, "\(handed) \(text)")
        #expect(try await Spread.execute(clientC, "/api/sessions/\(idle)/rendering", .get).status == .temporaryRedirect)
    }

    /// A stopping in order gives its leases up: B serves its sessions at once.
    static func stopping(a: SessionRouteTests.Fixture, clientA: some TestClientProtocol, clientB: some TestClientProtocol) async throws {
        let last = try await SessionRouteTests.create(clientA)
        _ = try await SessionRouteTests.rendering(clientA, a, last, count: 0)
        #expect(try await Spread.execute(clientB, "/api/sessions/\(last)/rendering", .get).status == .temporaryRedirect)
        await a.directory.stopAll()
        #expect(try await Spread.execute(clientB, "/api/sessions/\(last)/rendering", .get).status == .ok)
    }
}
