import ClusterTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// The session directory's state changes that sit between awaits on the store, played in a fixed
/// order against a private PostgreSQL server: the store is held at the await in question
/// (`HeldLeaseStore`) while another request or a stop runs, then let go.
@Suite("Gateway spread sessions: creations, takeovers and stops racing")
struct SpreadSessionRaceTests {
    typealias Spread = SpreadSessionRouteTests

    @Test(
        "a session taken over while a creation awaits its lease counts that creation against max_sessions: the directory never holds more than the limit"
    )
    func takeoverCountsCreations() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions test skipped: \(reason)") }
        try await PrivatePostgres.with { server in
            let (held, spreadA) = try await Self.heldSpread(server.url)
            let spreadB = try await Spread.spread(server.url, holder: "b")
            let a = try await SessionRouteTests.Fixture("gw-race-la", settings: SessionSettings(maxSessions: 2), spread: spreadA)
            let b = try await SessionRouteTests.Fixture("gw-race-lb", spread: spreadB)
            let outcome = await Self.outcome {
                try await a.application().test(.router) { clientA in
                    try await b.application().test(.router) { clientB in
                        _ = try await SessionRouteTests.create(clientA)
                        // B's session, given up when B stops: A may take it over.
                        let other = try await SessionRouteTests.create(clientB)
                        await b.directory.stopAll()
                        // A's second creation waits for its lease while A takes B's session over.
                        await held.hold(.creatingLease)
                        let creation = Task { try await Spread.execute(clientA, "/api/sessions", .post, body: "{}").status }
                        await held.waitUntilHeld(.creatingLease)
                        let takeover = try await Spread.execute(clientA, "/api/sessions/\(other)/rendering", .get)
                        #expect(takeover.status == .serviceUnavailable, "taken over past the limit: \(takeover.status) \(takeover.text)")
                        #expect(takeover.text.contains("too-many-sessions"), "\(takeover.text)")
                        await held.release(.creatingLease)
                        #expect(try await creation.value == .created)
                        let counts = await a.directory.counts
                        #expect(counts.active + counts.passivated == 2, "the limit is 2: \(counts)")
                    }
                }
            }
            await a.stop()
            await b.stop()
            await held.base.close()
            await spreadB.store.close()
            try outcome.get()
        }
    }

    @Test(
        "a takeover that reads its session's checkpoint while the coordinator stops leaves nothing behind: the stop's directory is empty and the session free for another"
    )
    func takeoverDuringStop() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions test skipped: \(reason)") }
        try await PrivatePostgres.with { server in
            let (held, spreadA) = try await Self.heldSpread(server.url)
            let spreadB = try await Spread.spread(server.url, holder: "b")
            let spreadC = try await Spread.spread(server.url, holder: "c")
            let a = try await SessionRouteTests.Fixture("gw-race-sa", spread: spreadA)
            let b = try await SessionRouteTests.Fixture("gw-race-sb", spread: spreadB)
            let c = try await SessionRouteTests.Fixture("gw-race-sc", spread: spreadC)
            let outcome = await Self.outcome {
                try await a.application().test(.router) { clientA in
                    try await b.application().test(.router) { clientB in
                        try await c.application().test(.router) { clientC in
                            let other = try await SessionRouteTests.create(clientB)
                            await b.directory.stopAll()
                            // A takes the session's lease, then stops while reading its checkpoint.
                            await held.hold(.checkpointRead)
                            let takeover = Task { try await Spread.execute(clientA, "/api/sessions/\(other)/rendering", .get).status }
                            await held.waitUntilHeld(.checkpointRead)
                            await a.directory.stopAll()
                            await held.release(.checkpointRead)
                            #expect(try await takeover.value != .ok, "served by a stopped coordinator")
                            let counts = await a.directory.counts
                            #expect(counts.active == 0 && counts.passivated == 0, "a stopped directory holds \(counts)")
                            // Nothing of A's holds it: C serves it at once.
                            let served = try await Spread.execute(clientC, "/api/sessions/\(other)/rendering", .get)
                            #expect(served.status == .ok, "\(served.status) \(served.text)")
                        }
                    }
                }
            }
            await a.stop()
            await b.stop()
            await c.stop()
            for store in [held.base, spreadB.store, spreadC.store] { await store.close() }
            try outcome.get()
        }
    }

    /// Coordinator A's part in the spread sessions of the database at `url`, through a store
    /// the test can hold. A runs no keeper: its lease term outlasts the test on a loaded machine
    /// (once it lapsed, A would rightly drop its sessions, and the race would not be played).
    static func heldSpread(_ url: String) async throws -> (HeldLeaseStore, SessionSpread) {
        let plain = try await Spread.spread(url, holder: "a", lease: .seconds(600))
        let held = HeldLeaseStore(plain.store)
        return (held, SessionSpread(store: held, holder: plain.holder, settings: plain.settings))
    }

    /// The outcome of `body`, so a test's cleanup runs whatever happened.
    static func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

/// A spread store whose chosen calls wait, when held, until the test lets them go: the
/// directory's await on the store in question is where the test runs something else.
/// Everything else goes straight to the wrapped store.
final class HeldLeaseStore: SessionLeaseStore {
    /// The calls that can be held.
    enum Point: Hashable, Sendable {
        /// A lease taken to create a session (`acquireSessionLease(creating: true)`).
        case creatingLease
        /// A session's checkpoint read (`latestCheckpoint(of: .session)`).
        case checkpointRead
    }

    /// The wrapped store (the test closes it).
    let base: any SessionLeaseStore
    private let gate = Gate()

    init(_ base: any SessionLeaseStore) {
        self.base = base
    }

    func hold(_ point: Point) async { await gate.hold(point) }
    func waitUntilHeld(_ point: Point) async { await gate.waitUntilHeld(point) }
    func release(_ point: Point) async { await gate.release(point) }

    func acquireWriter(holder: String) async throws(CoordinatorStoreError) -> FencingToken {
        try await base.acquireWriter(holder: holder)
    }

    func latestCheckpoint(of scope: CheckpointScope) async throws(CoordinatorStoreError) -> CoordinatorCheckpoint? {
        if case .session = scope { await gate.pass(.checkpointRead) }
        return try await base.latestCheckpoint(of: scope)
    }

    func commit(_ checkpoint: CoordinatorCheckpoint, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        try await base.commit(checkpoint, fencedBy: token)
    }

    func commit(_ checkpoints: [FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] {
        await base.commit(checkpoints)
    }

    func storedSessions() async throws(CoordinatorStoreError) -> [StoredSession] {
        try await base.storedSessions()
    }

    func remove(_ scope: CheckpointScope, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        try await base.remove(scope, fencedBy: token)
    }

    func close() async {}

    func beginSessionLeaseTerm(holder: String, gateway: String, for duration: Duration) async throws(CoordinatorStoreError) -> SessionLeaseTerm {
        try await base.beginSessionLeaseTerm(holder: holder, gateway: gateway, for: duration)
    }

    func renewSessionLeaseTerm(_ term: SessionLeaseTerm, for duration: Duration) async throws(CoordinatorStoreError) -> Bool {
        try await base.renewSessionLeaseTerm(term, for: duration)
    }

    func endSessionLeaseTerm(_ term: SessionLeaseTerm) async throws(CoordinatorStoreError) {
        try await base.endSessionLeaseTerm(term)
    }

    func acquireSessionLease(_ id: SessionID, term: SessionLeaseTerm, creating: Bool) async throws(CoordinatorStoreError) -> SessionLeaseAttempt {
        if creating { await gate.pass(.creatingLease) }
        return try await base.acquireSessionLease(id, term: term, creating: creating)
    }

    func releaseSessionLease(_ id: SessionID, token: FencingToken) async throws(CoordinatorStoreError) {
        try await base.releaseSessionLease(id, token: token)
    }

    /// Which points are held, who waits at them, and who waits for someone to.
    private actor Gate {
        private var held: Set<Point> = []
        private var waiting: [Point: [CheckedContinuation<Void, Never>]] = [:]
        private var watchers: [Point: [CheckedContinuation<Void, Never>]] = [:]

        func hold(_ point: Point) { held.insert(point) }

        func pass(_ point: Point) async {
            guard held.contains(point) else { return }
            await withCheckedContinuation { continuation in
                waiting[point, default: []].append(continuation)
                for watcher in watchers.removeValue(forKey: point) ?? [] { watcher.resume() }
            }
        }

        func waitUntilHeld(_ point: Point) async {
            guard waiting[point]?.isEmpty ?? true else { return }
            await withCheckedContinuation { watchers[point, default: []].append($0) }
        }

        func release(_ point: Point) {
            held.remove(point)
            for continuation in waiting.removeValue(forKey: point) ?? [] { continuation.resume() }
        }
    }
}
