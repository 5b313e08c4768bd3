import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

/// A leader and its standby upgraded one after the other while they serve (docs/OPERATIONS.md,
/// "Upgrading a cluster"): the coordinator of the next release is `durability-test-daemon` with
/// DURABILITY_TEST_STORE_SCHEMA=next (its store schema has a step to version 2 that adds a
/// column: `NextReleaseSchema`), as the workers' rolling-upgrade test plays the next worker
/// build. Real daemons on a private PostgreSQL server, real HTTP clients sending a steady stream
/// of events to the shared root and to a session, checked as the standby tests check them
/// (`StandbyCoordinatorProcessTests`, `DurableAcceptanceProcessTests`).
@Suite("Coordinator upgrade", .serialized)
struct CoordinatorUpgradeProcessTests {
    typealias Standby = StandbyCoordinatorProcessTests
    typealias Durable = DurableAcceptanceProcessTests

    /// A tree the clients send events to: the shared root (`api` "/api") or a session.
    struct Tree: Sendable {
        var api: String
        var ledger: LedgerBox
    }

    /// Each of `trees`' ready renderings on `gateway` (both ledgers rendered).
    static func ready(_ trees: [Tree], on gateway: GatewayClient) async throws -> [Durable.Ledgers] {
        var ready: [Durable.Ledgers] = []
        for tree in trees {
            ready.append(
                try await Durable.first("both ledgers of \(tree.api) rendered", on: gateway, api: tree.api, ledger: tree.ledger) {
                    $0.record != nil && $0.remote.available && $0.remote.record != nil
                })
        }
        return ready
    }

    /// Clients sending events to every tree of `trees` on `gateway` at once, until each has had
    /// `more` more accepted or the coordinator is gone; `accepted` is told each tree's count.
    static func send(
        _ trees: [Tree], on gateway: GatewayClient, from ready: [Durable.Ledgers], more: Int, accepted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for (tree, ready) in zip(trees, ready) {
                let stopAt = Standby.acceptedSoFar(tree.ledger, plus: more)
                group.addTask {
                    await Durable.send(to: gateway, api: tree.api, from: ready, ledger: tree.ledger, stopAt: stopAt, accepted: accepted)
                }
            }
        }
    }

    /// Waits until `gateway` shows every event accepted for each of `trees`, and records its final ledgers.
    static func finish(_ trees: [Tree], on gateway: GatewayClient) async throws {
        for tree in trees {
            let accepted = tree.ledger.withLock { $0.accepted }
            let final = try await Durable.first("every accepted event of \(tree.api) applied", on: gateway, api: tree.api, ledger: tree.ledger) { ledgers in
                (0..<2).allSatisfy { sink in ledgers.ids(sink).map { accepted[sink].isSubset(of: $0) } ?? false }
            }
            tree.ledger.withLock { $0.final = [final.ids, final.remote.ids] }
        }
    }

    /// The first line of `daemon`'s log containing `text` (waited for).
    static func logLine(_ daemon: DaemonProcess, _ text: String) async throws -> String {
        try await daemon.stderr.first("\(daemon.label) to log \"\(text)\"") { $0.contains(text) }
    }

    /// The coordinators' sessions section in the upgrade tests: on, never passivated meanwhile.
    static var sessions: [String: Any] { ["enabled": true, "idle_timeout_ms": 600_000] }

    @Test("a leader and its standby upgraded one after the other under a stream of events to the shared root and a session: the store stays at schema version 1 while the leader of the earlier release runs, the last step runs once when both run the next release, no accepted event is lost or applied twice, the session lives on; a coordinator of the earlier release is then refused (exit 78)")
    func leaderAndStandbyUpgraded() async throws {
        try await Standby.withTwoCoordinators("coordinator-upgrade") { cluster, endpoints, server in
            // Sessions on (the worker read the file already; it ignores them).
            try Durable.writeConfig(
                cluster, store: ["kind": "postgres", "url": server.url, "lease_ms": Standby.leaseMilliseconds], endpoints: endpoints,
                sessions: Self.sessions)
            let figures = try await Self.upgradeOneAfterTheOther(LocalUpgradePair(cluster: cluster, endpoints: endpoints, database: server))
            print("coordinator upgrade: \(figures)")
        }
    }

    /// The upgrade, wherever `pair`'s coordinators run: coordinator 0 leads and 1 stands by, both
    /// of this release, serving the shared root and a session; the standby is replaced by the
    /// next release, then the leader is stopped and replaced, each while clients send events;
    /// then a coordinator of this release is started and must be refused. Returns the figures.
    static func upgradeOneAfterTheOther(_ pair: some UpgradablePair) async throws -> String {
        let shared = Tree(api: "/api", ledger: LedgerBox())
        let started = try await Standby.startLeaderAndStandby(pair, ledger: shared.ledger)
        defer { started.leaderWatcher.cancel() }
        let created = try await started.leaderGateway.post("/api/sessions", json: #"{"root": "event-ledger"}"#)
        #expect(created.status == 201, "\(created.text)")
        let id = try JSONDecoder().decode(DurableSessionProcessTests.Created.self, from: created.body).session
        let trees = [shared, Tree(api: "/api/sessions/\(id)", ledger: LedgerBox())]
        var ready = try await Self.ready(trees, on: started.leaderGateway)

        // 1. The standby, stopped and started as the next release while the leader serves: it
        // keeps the store at version 1 (the leader writes nothing else).
        async let duringStandby: Void = Self.send(trees, on: started.leaderGateway, from: ready, more: 150)
        #expect(try await started.standby.terminate() == 0)
        let standby = try pair.startNextRelease(1)
        try await Standby.expectStandby(pair.gateway(1, of: standby, role: "standby"))
        await duringStandby
        let kept = try await Self.logLine(standby, "store schema kept at version 1")
        #expect(kept.contains("at \(pair.endpoints[0]) (newest version 1)"), "\(kept)")
        #expect(try await StoreSchemaProcessTests.psql(pair.database, "SELECT version FROM coordinator_schema") == "1")

        // 2. The leader stopped (SIGTERM: it gives the lease up) under the stream: the upgraded
        // standby takes over, still writing version 1.
        ready = try await Self.ready(trees, on: started.leaderGateway)
        let stoppedAt = Mutex<ContinuousClock.Instant?>(nil)
        let leaderPid = started.leader.pid
        let stopAfter = Int.random(in: 20...120)
        let counted = Mutex(0)
        await Self.send(trees, on: started.leaderGateway, from: ready, more: 1_000_000) { _ in
            let total = counted.withLock { count in
                count += 1
                return count
            }
            guard total == stopAfter else { return }
            kill(leaderPid, SIGTERM)
            stoppedAt.withLock { $0 = .now }
        }
        if started.leader.isRunning, stoppedAt.withLock({ $0 }) == nil {
            kill(leaderPid, SIGTERM)
            stoppedAt.withLock { $0 = .now }
        }
        #expect(try await started.leader.waitForExit() == 0)
        let taken = try await Standby.takenOver(standby, of: pair, ledger: shared.ledger, faultAt: { stoppedAt.withLock { $0 } })
        defer { taken.watcher.cancel() }
        // The session lives on: the new leader resumes it from the store.
        ready = try await Self.ready(trees, on: taken.gateway)
        let streamsBack = stoppedAt.withLock { $0 }.map { "\(Standby.milliseconds($0.duration(to: .now))) ms" } ?? "-"

        // 3. The old leader's replacement, started as the next release while the new leader
        // serves: every coordinator of the store writes version 2, so its start runs the last
        // step (once), and the leader writes version 2 from its next commit on. The stopped
        // coordinators' database sessions end a moment after their processes (later on a
        // loaded machine): waited for on their announcements' locks, so the replacement finds
        // only coordinators of the next release.
        _ = try await StoreSchemaProcessTests.psql(
            pair.database,
            "SELECT pg_advisory_lock((('coordinator_release'::regclass::oid::bigint << 32) | (number % 4294967296))) FROM coordinator_release WHERE newest_version = 1")
        async let duringMigration: Void = Self.send(trees, on: taken.gateway, from: ready, more: 150)
        let replacement = try pair.startNextRelease(0)
        try await Standby.expectStandby(pair.gateway(0, of: replacement, role: "standby"))
        await duringMigration
        _ = try await Self.logLine(replacement, "store schema migrated to version 2")
        ready = try await Self.ready(trees, on: taken.gateway)
        await Self.send(trees, on: taken.gateway, from: ready, more: 60)
        _ = try await Self.logLine(standby, "the store's schema was migrated to version 2 by another coordinator: writing it from now on")
        #expect(try await StoreSchemaProcessTests.psql(pair.database, "SELECT version FROM coordinator_schema") == "2")
        #expect(try await StoreSchemaProcessTests.psql(pair.database, "SELECT count(*) FROM test_schema_step_run") == "1")
        // Every checkpoint carries the new column, right for its snapshot.
        #expect(
            try await StoreSchemaProcessTests.psql(
                pair.database, "SELECT count(*) FROM coordinator_tree_checkpoint WHERE snapshot_bytes IS DISTINCT FROM octet_length(snapshot)") == "0")

        // 4. A coordinator of the earlier release is refused at start, in words.
        let refused = try pair.startCoordinator(0, [])
        #expect(try await refused.waitForExit() == 78)
        let words = refused.stderr.lines.joined(separator: "\n")
        #expect(words.contains("the store's schema is version 2, newer than this coordinator's (version 1)"), "\(words)")

        try await Self.finish(trees, on: taken.gateway)
        return trees.map { "\($0.api == "/api" ? "shared root" : "session"): \(Standby.checkedOutcome($0.ledger))" }.joined(separator: "; ")
            + "; takeover after the leader's SIGTERM \(taken.takeover), streams back after \(streamsBack)"
    }
}

/// Where the upgrade test's two coordinators run (`StandbyPair`), and what else it needs: the
/// next release of a coordinator, the coordinators' endpoints (their names in the store say
/// them) and the database they share.
protocol UpgradablePair: StandbyPair {
    /// Starts coordinator `index` (0 or 1) as the next release (`NextReleaseSchema`).
    func startNextRelease(_ index: Int) throws -> DaemonProcess
    /// Each coordinator's endpoint, by index.
    var endpoints: [String] { get }
    /// The PostgreSQL server the coordinators share.
    var database: PrivatePostgres { get }
}

/// Both coordinators on this host, as `StandbyCoordinatorProcessTests.LocalPair` runs them.
struct LocalUpgradePair: UpgradablePair {
    let cluster: ClusterFixture
    let endpoints: [String]
    let database: PrivatePostgres

    var local: StandbyCoordinatorProcessTests.LocalPair { .init(cluster: cluster, endpoints: endpoints) }

    func startCoordinator(_ index: Int, _ extra: [String]) throws -> DaemonProcess { try local.startCoordinator(index, extra) }

    func gateway(_ index: Int, of coordinator: DaemonProcess, role: String) async throws -> GatewayClient {
        try await local.gateway(index, of: coordinator, role: role)
    }

    func startNextRelease(_ index: Int) throws -> DaemonProcess {
        try cluster.start(
            "durability-test-daemon", StandbyCoordinatorProcessTests.coordinatorArguments(cluster, endpoints, index),
            label: "coordinator-\(index)-next", environment: ["DURABILITY_TEST_STORE_SCHEMA": "next"])
    }
}
