import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

/// Where a standby test's two coordinators run, and how its clients reach their gateways: on
/// this host over ipc (`StandbyCoordinatorProcessTests.LocalPair`) or on two hosts of a network
/// lab (`StandbyLab`).
protocol StandbyPair: Sendable {
    /// Starts coordinator `index` (0 or 1), adding `extra` arguments.
    func startCoordinator(_ index: Int, _ extra: [String]) throws -> DaemonProcess
    /// Waits until coordinator `index` (`coordinator`) prints its gateway in `role`; returns a
    /// client of that gateway.
    func gateway(_ index: Int, of coordinator: DaemonProcess, role: String) async throws -> GatewayClient
}

/// Two coordinators for one root sharing a private PostgreSQL server with a lease
/// (`store.lease_ms`), one worker configured with both endpoints, real HTTP clients sending a
/// steady stream of events: the leader is SIGKILLed, or frozen with SIGSTOP and woken, and the
/// standby takes over from the store. Every event answered 202 must take effect exactly once
/// (the checks of `DurableAcceptanceProcessTests`); the takeover time is printed, not asserted.
@Suite("Standby coordinator", .serialized)
struct StandbyCoordinatorProcessTests {
    typealias Durable = DurableAcceptanceProcessTests

    /// The lease the tests configure: the recommended one (`StoreSettings.recommendedLease`; its
    /// renewals run on a thread of their own, so a leader starved of CPU keeps it).
    static let leaseMilliseconds = 2_000

    /// A fixture whose configuration lists two coordinator endpoints and a PostgreSQL store with
    /// a lease, on a private server; skipped, saying why, where no server can be had.
    /// With `loopback`, the server listens on TCP too (`PrivatePostgres.loopbackURL`).
    static func withTwoCoordinators(
        _ label: String, loopback: Bool = false, _ body: (ClusterFixture, [String], PrivatePostgres) async throws -> Void
    ) async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("standby coordinator test skipped: \(reason)") }
        try await PrivatePostgres.with(listeningOnLoopback: loopback) { server in
            try await ClusterFixture.with(label) { cluster in
                let endpoints = [cluster.endpoint, cluster.endpoint + "-b"]
                try Durable.writeConfig(
                    cluster, store: ["kind": "postgres", "url": server.url, "lease_ms": leaseMilliseconds], endpoints: endpoints)
                _ = try cluster.start(
                    "durability-test-daemon", ["--config", cluster.configPath, "--name", "w1"], label: "w1",
                    environment: ["DURABILITY_TEST_ROLE": "worker"])
                try await body(cluster, endpoints, server)
            }
        }
    }

    /// The arguments of coordinator `index` of `cluster`: binding `endpoints[index]` once it
    /// leads, printing renderings as JSON lines, `extra` added.
    static func coordinatorArguments(_ cluster: ClusterFixture, _ endpoints: [String], _ index: Int, _ extra: [String] = []) -> [String] {
        ["--config", cluster.configPath, "--print-renderings", "json", "--endpoint", endpoints[index]] + extra
    }

    /// Both coordinators on this host, over ipc; clients reach the gateway each prints.
    struct LocalPair: StandbyPair {
        let cluster: ClusterFixture
        let endpoints: [String]

        func startCoordinator(_ index: Int, _ extra: [String]) throws -> DaemonProcess {
            try cluster.start(
                "durability-test-daemon", StandbyCoordinatorProcessTests.coordinatorArguments(cluster, endpoints, index, extra),
                label: "coordinator-\(index)")
        }

        func gateway(_ index: Int, of coordinator: DaemonProcess, role: String) async throws -> GatewayClient {
            try await GatewayClient.of(coordinator, role: role)
        }
    }

    /// The gateway `standby` is a standby's: readiness 503 with the role, every API request 503
    /// `standby` with `Retry-After`.
    static func expectStandby(_ standby: GatewayClient) async throws {
        let ready = try await standby.get("/health/ready")
        #expect(ready.status == 503 && ready.text.contains(#""role":"standby""#), "\(ready.status) \(ready.text)")
        let event = try await standby.post("/api/events/anything", json: "1")
        #expect(event.status == 503 && event.text.contains(#""error":"standby""#) && event.retryAfter == "1", "\(event.status) \(event.text)")
        let rendering = try await standby.get("/api/rendering")
        #expect(rendering.status == 503 && rendering.retryAfter == "1", "\(rendering.status) \(rendering.text)")
        let live = try await standby.get("/health/live")
        #expect(live.status == 200)
    }

    /// Every rendering `gateway` streams, checked against what `client` was shown before (by
    /// default the watcher following the leader, -1, as `DurableAcceptanceProcessTests` numbers
    /// its clients).
    static func watch(_ gateway: GatewayClient, ledger: LedgerBox, client: Int = -1) -> Task<Void, Never> {
        Task {
            try? await gateway.stream { text in
                let message = try Durable.decode(Data(text.utf8))
                ledger.withLock { $0.saw(client: client, sequence: message.sequence, message.rendering) }
                return false
            }
        }
    }

    /// Both ledgers rendered on `gateway` (the remote child by the worker): the tree is served.
    static func ready(_ gateway: GatewayClient, ledger: LedgerBox) async throws -> Durable.Ledgers {
        try await Durable.first("both ledgers rendered", on: gateway, ledger: ledger) { ledgers in
            ledgers.record != nil && ledgers.remote.available && ledgers.remote.record != nil
        }
    }

    /// Waits until `gateway` shows every accepted event and records the final ledgers.
    static func finish(_ gateway: GatewayClient, ledger: LedgerBox) async throws {
        let accepted = ledger.withLock { $0.accepted }
        let final = try await Durable.first("every accepted event applied", on: gateway, ledger: ledger) { ledgers in
            (0..<2).allSatisfy { sink in ledgers.ids(sink).map { accepted[sink].isSubset(of: $0) } ?? false }
        }
        ledger.withLock { $0.final = [final.ids, final.remote.ids] }
    }

    /// A leader serving the tree and a standby: what the fault tests start from.
    struct LeaderAndStandby {
        var leader: DaemonProcess
        var leaderGateway: GatewayClient
        /// The leader's rendering with both ledgers, its clients' first tokens.
        var leaderReady: Durable.Ledgers
        /// The leader's stream watcher: a client of its own (-3), since a rendering the leader
        /// sent just before a fault may reach it only after the successor's.
        var leaderWatcher: Task<Void, Never>
        var standby: DaemonProcess
    }

    /// Starts coordinator 0 (with `leaderArguments`), waits until it serves the tree, then
    /// coordinator 1 (with `standbyArguments`), checked to be a standby.
    static func startLeaderAndStandby(
        _ pair: some StandbyPair, ledger: LedgerBox, leaderArguments: [String] = [], standbyArguments: [String] = []
    ) async throws -> LeaderAndStandby {
        let leader = try pair.startCoordinator(0, leaderArguments)
        let gateway = try await pair.gateway(0, of: leader, role: "leader")
        let standby = try pair.startCoordinator(1, standbyArguments)
        try await Self.expectStandby(pair.gateway(1, of: standby, role: "standby"))
        let watcher = Self.watch(gateway, ledger: ledger, client: -3)
        let ready = try await Self.ready(gateway, ledger: ledger)
        return LeaderAndStandby(leader: leader, leaderGateway: gateway, leaderReady: ready, leaderWatcher: watcher, standby: standby)
    }

    /// The standby once it leads: its gateway, its watcher, its rendering with both ledgers,
    /// and the time from `faultAt` (when the test struck the old leader) until then.
    /// Coordinator 1 of `pair` (`standby`) by default.
    static func takenOver(
        _ standby: DaemonProcess, of pair: some StandbyPair, index: Int = 1, ledger: LedgerBox, faultAt: () -> ContinuousClock.Instant?
    ) async throws
        -> (gateway: GatewayClient, watcher: Task<Void, Never>, ready: Durable.Ledgers, takeover: String)
    {
        let gateway = try await pair.gateway(index, of: standby, role: "leader")
        let watcher = Self.watch(gateway, ledger: ledger)
        let ready = try await Self.ready(gateway, ledger: ledger)
        let takeover = faultAt().map { "\(Self.milliseconds($0.duration(to: .now))) ms" } ?? "-"
        return (gateway, watcher, ready, takeover)
    }

    /// The clients' accepted events so far plus `more`: where a stream of events stops.
    static func acceptedSoFar(_ ledger: LedgerBox, plus more: Int) -> Int {
        ledger.withLock { $0.accepted[0].count + $0.accepted[1].count } + more
    }

    /// Checks the clients' ledger (`DurableAcceptanceProcessTests.expectEachAcceptedAppliedOnce`)
    /// and says the figures: accepted, lost, applied twice, in doubt.
    static func checkedOutcome(_ ledger: LedgerBox, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let result = ledger.withLock { $0 }
        let inDoubtApplied = Durable.expectEachAcceptedAppliedOnce(result, sourceLocation: sourceLocation)
        let lost = (0..<2).map { result.accepted[$0].subtracting(result.final[$0]).count }.reduce(0, +)
        let twice = (0..<2).map { result.final[$0].count - Set(result.final[$0]).count }.reduce(0, +)
        return "accepted \(result.accepted.map(\.count)) (root, remote), lost \(lost), applied twice \(twice); "
            + "in doubt \(result.inDoubt.map(\.count)), of which applied \(inDoubtApplied)"
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The leader SIGKILLed `kills` times at random moments under a steady stream of events, the
    /// killed one restarted each time (as its supervisor would) and checked to be a standby;
    /// ends with every accepted event applied. Returns each takeover (kill to the tree served
    /// again) in milliseconds.
    static func killRounds(_ pair: some StandbyPair, kills: Int, ledger: LedgerBox) async throws -> [Int] {
        var coordinators = [try pair.startCoordinator(0, [])]
        var gateway = try await pair.gateway(0, of: coordinators[0], role: "leader")
        coordinators.append(try pair.startCoordinator(1, []))
        try await Self.expectStandby(pair.gateway(1, of: coordinators[1], role: "standby"))
        let leaderReady = try await gateway.get("/health/ready")
        #expect(leaderReady.text.contains(#""role":"leader""#), "\(leaderReady.text)")
        var leader = 0
        var takeovers: [Int] = []
        let killedAt = Mutex<ContinuousClock.Instant?>(nil)
        for round in 0...kills {
            let watcher = Self.watch(gateway, ledger: ledger)
            defer { watcher.cancel() }
            let ready = try await Self.ready(gateway, ledger: ledger)
            if let killed = killedAt.withLock({ $0 }) { takeovers.append(Self.milliseconds(killed.duration(to: .now))) }
            killedAt.withLock { $0 = nil }
            if let previous = ledger.withLock({ $0.lastToken }) {
                // A root token of the killed leader's renderings: not unknown, restarted.
                let answer = try await gateway.post(Durable.path(for: previous), json: "0")
                #expect(answer.status == 410 && answer.text.contains("restarted"), "round \(round): \(answer.status) \(answer.text)")
            }
            ledger.withLock { $0.lastToken = ready.record }
            if round == kills {
                try await Self.finish(gateway, ledger: ledger)
                break
            }
            let killAfter = ledger.withLock { $0.accepted[0].count + $0.accepted[1].count } + Int.random(in: 1...150)
            let victim = coordinators[leader]
            let pid = victim.pid
            await Durable.send(to: gateway, from: ready, ledger: ledger) { total in
                guard total == killAfter else { return }
                kill(pid, SIGKILL)
                killedAt.withLock { $0 = .now }
            }
            if victim.isRunning {
                kill(pid, SIGKILL)
                killedAt.withLock { $0 = $0 ?? .now }
            }
            try await victim.waitForExit()
            // A leader starved of CPU on a loaded machine may miss its renewals and step down by
            // itself (exit 75) before the kill: the standby takes over all the same, and what
            // the clients were answered is checked as for a kill.
            let killed = victim.process.terminationReason == .uncaughtSignal
            let steppedDown = victim.process.terminationReason == .exit && victim.process.terminationStatus == 75
            #expect(killed || steppedDown, "round \(round): the leader was neither SIGKILLed nor stepped down (exit \(victim.process.terminationStatus))")
            if steppedDown { print("standby takeover, round \(round): the leader stepped down by itself (exit 75) before the kill") }
            let successor = 1 - leader
            gateway = try await pair.gateway(successor, of: coordinators[successor], role: "leader")
            // The killed one restarted (as its supervisor would): a standby now.
            coordinators[leader] = try pair.startCoordinator(leader, [])
            try await Self.expectStandby(pair.gateway(leader, of: coordinators[leader], role: "standby"))
            leader = successor
        }
        return takeovers
    }

    /// What `freezeAndWake` saw: the new leader's gateway, the takeover (freeze to the tree
    /// served again), the woken leader's exit status.
    struct Frozen {
        var gateway: GatewayClient
        var takeover: String
        var status: Int32
    }

    /// The leader frozen (SIGSTOP) at a random moment under a stream of events: the standby takes
    /// over and serves more events; woken (SIGCONT), the old leader must step down (exit 75,
    /// saying so) with none of its clients' answers since accepted; then more events and the
    /// final check.
    static func freezeAndWake(_ pair: some StandbyPair, ledger: LedgerBox, standbyArguments: [String] = []) async throws -> Frozen {
        let start = try await Self.startLeaderAndStandby(pair, ledger: ledger, standbyArguments: standbyArguments)
        defer { start.leaderWatcher.cancel() }
        let (old, successor) = (start.leader, start.standby)
        let stopAfter = Int.random(in: 20...150)
        let pid = old.pid
        let frozenAt = Mutex<ContinuousClock.Instant?>(nil)
        // The clients of the old leader: their requests hang while it is frozen and get their
        // answers (or none) once it wakes.
        let oldClients = Task {
            await Durable.send(to: start.leaderGateway, from: start.leaderReady, ledger: ledger) { total in
                guard total == stopAfter else { return }
                kill(pid, SIGSTOP)
                frozenAt.withLock { $0 = .now }
            }
        }
        defer { if old.isRunning { kill(pid, SIGCONT) } }
        let (gateway, watcher, ready, takeover) = try await Self.takenOver(
            successor, of: pair, ledger: ledger, faultAt: { frozenAt.withLock { $0 } })
        defer { watcher.cancel() }
        // The new leader serves while the old one is frozen.
        await Durable.send(to: gateway, from: ready, ledger: ledger, stopAt: Self.acceptedSoFar(ledger, plus: 100))
        kill(pid, SIGCONT)
        let status = try await old.waitForExit()
        #expect(old.process.terminationReason == .exit && status == 75, "the woken leader ended with \(status) (\(old.process.terminationReason))")
        #expect(old.stderr.lines.contains { $0.contains("stepping down") }, "the woken leader did not say it stepped down")
        await oldClients.value
        // Its clients' answers since it woke: none accepted (its writes are fenced).
        #expect(successor.isRunning)
        // The new leader still leads, its state intact: more events, then the final check.
        let fresh = try await Self.ready(gateway, ledger: ledger)
        await Durable.send(to: gateway, from: fresh, ledger: ledger, stopAt: Self.acceptedSoFar(ledger, plus: 50))
        try await Self.finish(gateway, ledger: ledger)
        return Frozen(gateway: gateway, takeover: takeover, status: status)
    }

    @Test("the leader SIGKILLed 10 times under a steady stream of events: the standby takes over from the store each time, every event answered 202 applied exactly once")
    func leaderKilled() async throws {
        try await Self.withTwoCoordinators("standby-kill") { cluster, endpoints, _ in
            let ledger = LedgerBox()
            let kills = 10
            let takeovers = try await Self.killRounds(LocalPair(cluster: cluster, endpoints: endpoints), kills: kills, ledger: ledger)
            let outcome = Self.checkedOutcome(ledger)
            print(
                "standby takeover after leader SIGKILL (lease \(Self.leaseMilliseconds) ms): \(kills) kills, takeover (kill to the tree served again) "
                    + "\(takeovers.map { "\($0) ms" }.joined(separator: ", ")); \(outcome)")
        }
    }

    @Test("the leader frozen (SIGSTOP) under a stream of events: the standby takes over; woken (SIGCONT), the old leader writes nothing and steps down (exit 75)")
    func leaderFrozen() async throws {
        try await Self.withTwoCoordinators("standby-stop") { cluster, endpoints, _ in
            let ledger = LedgerBox()
            // The standby's gateway on a fixed port: it serves there as a standby, then as the leader.
            let port = try LoopbackPort.unused()
            let frozen = try await Self.freezeAndWake(
                LocalPair(cluster: cluster, endpoints: endpoints), ledger: ledger, standbyArguments: ["--gateway-listen", "127.0.0.1:\(port)"])
            #expect(frozen.gateway.baseURL == "http://127.0.0.1:\(port)", "the new leader's gateway is not where its standby gateway was")
            let outcome = Self.checkedOutcome(ledger)
            print(
                "standby takeover after leader SIGSTOP (lease \(Self.leaseMilliseconds) ms): takeover (freeze to the tree served again) "
                    + "\(frozen.takeover); the woken leader exited \(frozen.status); \(outcome)")
        }
    }


    @Test("the leader cut off from the database under a stream of events (its connection frozen): it steps down by its own deadline (exit 75), the standby takes over, every event answered 202 applied exactly once")
    func leaderCutOffFromDatabase() async throws {
        try await Self.withTwoCoordinators("standby-cut", loopback: true) { cluster, endpoints, server in
            // The first coordinator reaches the database through a proxy this test freezes (SIGSTOP):
            // its connection stays open and nothing gets through, as across a partition.
            let target = "127.0.0.1:\(server.port)"
            let script = try #require(repositoryFolder(holding: "scripts/netlab-delay.pl", from: #filePath)).appendingPathComponent("scripts/netlab-delay.pl").path
            let proxy = try cluster.start("/usr/bin/perl", [script, "0", target, "0", "0", "127.0.0.1"], label: "database proxy")
            let proxyLine = try await proxy.stdout.first("the proxy to listen") { $0.hasPrefix("listening ") }
            let proxyPort = try #require(Int(proxyLine.dropFirst("listening ".count)))
            let ledger = LedgerBox()
            let pair = LocalPair(cluster: cluster, endpoints: endpoints)
            let start = try await Self.startLeaderAndStandby(
                pair, ledger: ledger, leaderArguments: ["--store-url", "postgres://postgres@127.0.0.1:\(proxyPort)/postgres"])
            defer { start.leaderWatcher.cancel() }
            let (old, successor) = (start.leader, start.standby)
            let cutAfter = Int.random(in: 20...150)
            let proxyPID = proxy.pid
            let cutAt = Mutex<ContinuousClock.Instant?>(nil)
            defer { if proxy.isRunning { kill(proxyPID, SIGCONT) } }
            // Its clients: their events wait for commits that cannot get through, and are in
            // doubt when it steps down.
            await Durable.send(to: start.leaderGateway, from: start.leaderReady, ledger: ledger) { total in
                guard total == cutAfter else { return }
                kill(proxyPID, SIGSTOP)
                cutAt.withLock { $0 = .now }
            }
            let status = try await old.waitForExit()
            #expect(old.process.terminationReason == .exit && status == 75, "the cut-off leader ended with \(status) (\(old.process.terminationReason))")
            #expect(
                old.stderr.lines.contains { $0.contains("stepping down: the lease could not be renewed before its deadline") },
                "the cut-off leader did not say why it stepped down")
            let (gateway, watcher, ready, takeover) = try await Self.takenOver(successor, of: pair, ledger: ledger, faultAt: { cutAt.withLock { $0 } })
            defer { watcher.cancel() }
            await Durable.send(to: gateway, from: ready, ledger: ledger, stopAt: Self.acceptedSoFar(ledger, plus: 100))
            kill(proxyPID, SIGCONT)
            try await Self.finish(gateway, ledger: ledger)
            let outcome = Self.checkedOutcome(ledger)
            print(
                "standby takeover after the leader was cut off from the database (lease \(Self.leaseMilliseconds) ms): takeover (cut to the tree served again) "
                    + "\(takeover); the cut-off leader exited \(status); \(outcome)")
        }
    }
}
