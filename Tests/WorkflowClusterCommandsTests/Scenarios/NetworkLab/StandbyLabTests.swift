import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

/// A standby coordinator across the lab's hosts (docs/OPERATIONS.md, "A standby coordinator"):
/// the leader and the standby on two hosts, their worker on a third, the PostgreSQL server they
/// share on a fourth, over TCP (`StandbyLab`); the scenarios of `StandbyCoordinatorProcessTests`
/// over a network, and a partition of the leader's host. Clients send a steady stream of events
/// with unique ids; every event answered 202 must be applied exactly once. In the network lab
/// suite (its traits: serialized, skipped where no lab can be made).
extension NetworkLabTests {
    typealias Standby = StandbyCoordinatorProcessTests

    @Test("standby in the lab: the leader SIGKILLed 10 times under a steady stream of events, the standby on another host takes over each time, every event answered 202 applied exactly once")
    func standbyLeaderKilled() async throws {
        try await StandbyLab.with("sb-kill") { pair in
            let ledger = LedgerBox()
            let kills = 10
            let takeovers = try await Standby.killRounds(pair, kills: kills, ledger: ledger)
            let outcome = Standby.checkedOutcome(ledger)
            labFigure(
                "standby takeover after leader SIGKILL, leader and standby on two hosts, PostgreSQL on a third (lease \(Standby.leaseMilliseconds) ms, "
                    + "heartbeat \(StandbyLab.heartbeat)): \(kills) kills, takeover (kill to the tree served again) "
                    + "\(takeovers.map { "\($0) ms" }.joined(separator: ", ")); \(outcome)")
        }
    }

    @Test("standby in the lab: the leader frozen (SIGSTOP) under a stream of events, the standby on another host takes over; woken (SIGCONT), the old leader writes nothing and steps down (exit 75)")
    func standbyLeaderFrozen() async throws {
        try await StandbyLab.with("sb-stop") { pair in
            let ledger = LedgerBox()
            let frozen = try await Standby.freezeAndWake(pair, ledger: ledger)
            let outcome = Standby.checkedOutcome(ledger)
            labFigure(
                "standby takeover after leader SIGSTOP, on two hosts (lease \(Standby.leaseMilliseconds) ms, heartbeat \(StandbyLab.heartbeat)): "
                    + "takeover (freeze to the tree served again) \(frozen.takeover); the woken leader exited \(frozen.status); \(outcome)")
        }
    }

    @Test("standby in the lab: the leader's host partitioned (from the database and the worker) under a stream of events: it steps down (exit 75), the standby takes over, the worker moves to it; after the heal nothing is applied twice")
    func standbyLeaderPartitioned() async throws {
        try await StandbyLab.with("sb-part") { pair in
            let ledger = LedgerBox()
            let start = try await Standby.startLeaderAndStandby(pair, ledger: ledger)
            defer { start.leaderWatcher.cancel() }
            let (old, successor) = (start.leader, start.standby)
            let leaderHost = StandbyLab.coordinatorHosts[0]
            let lab = pair.lab
            let cutAfter = Int.random(in: 20...150)
            let cutAt = Mutex<ContinuousClock.Instant?>(nil)
            let cut = Mutex<Task<Void, any Error>?>(nil)
            @Sendable func cutLeaderHost() {
                cut.withLock { task in
                    guard task == nil else { return }
                    cutAt.withLock { $0 = .now }
                    task = Task { try await lab.cut(leaderHost) }
                }
            }
            // Its clients (outside the lab's network, so not cut off from it): their events wait
            // for commits that cannot get through, and are in doubt when it steps down.
            await Standby.Durable.send(to: start.leaderGateway, from: start.leaderReady, ledger: ledger) { total in
                if total == cutAfter { cutLeaderHost() }
            }
            cutLeaderHost()  // if the clients stopped before (a failed request): cut now
            try await cut.withLock { $0 }?.value
            let status = try await old.waitForExit()
            #expect(old.process.terminationReason == .exit && status == 75, "the cut-off leader ended with \(status) (\(old.process.terminationReason))")
            #expect(
                old.stderr.lines.contains { $0.contains("stepping down: the lease could not be renewed before its deadline") },
                "the cut-off leader did not say why it stepped down")
            let (gateway, watcher, ready, takeover) = try await Standby.takenOver(
                successor, of: pair, ledger: ledger, faultAt: { cutAt.withLock { $0 } })
            defer { watcher.cancel() }
            // The remote ledger rendered by the new leader: the worker moved to it.
            await Standby.Durable.send(to: gateway, from: ready, ledger: ledger, stopAt: Standby.acceptedSoFar(ledger, plus: 100))
            let dropped = try await lab.heal(leaderHost)
            // Healed, the old leader's host starts it again (as its supervisor would): a standby.
            let restarted = try pair.startCoordinator(0, [])
            try await Standby.expectStandby(pair.gateway(0, of: restarted, role: "standby"))
            let fresh = try await Standby.ready(gateway, ledger: ledger)
            await Standby.Durable.send(to: gateway, from: fresh, ledger: ledger, stopAt: Standby.acceptedSoFar(ledger, plus: 50))
            try await Standby.finish(gateway, ledger: ledger)
            #expect(successor.isRunning && restarted.isRunning)
            #expect(dropped > 0, "the cut dropped nothing")
            let outcome = Standby.checkedOutcome(ledger)
            labFigure(
                "standby takeover after the leader's host was partitioned (from PostgreSQL and the worker; lease \(Standby.leaseMilliseconds) ms, "
                    + "heartbeat \(StandbyLab.heartbeat)): takeover (cut to the tree served again) \(takeover); the cut-off leader exited \(status); "
                    + "\(dropped) frames dropped; \(outcome)")
        }
    }
}

extension NetworkLabTests {
    @Test("a private PostgreSQL server on a lab host: another host reaches it over TCP, a cut separates them, and it is removed with its directory also when the test's body throws")
    func privatePostgresOnLabHost() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("skipped: \(reason)") }
        let psql = "/usr/bin/psql"
        try #require(FileManager.default.isExecutableFile(atPath: psql), "no \(psql) (Debian: postgresql-client, which postgresql installs)")
        struct Planned: Error {}
        try await NetLab.with(hosts: ["db", "client"]) { lab in
            let directory = Mutex<URL?>(nil)
            /// psql's exit status and output for `select 1` from the host `client`.
            @Sendable func query(_ url: String) async throws -> (Int32, [String]) {
                let (command, arguments) = lab.onHost("client", [psql, "-tAc", "select 1", url + "?connect_timeout=3"])
                let client = try DaemonProcess(command, arguments, label: "psql on client")
                return (try await client.waitForExit(), client.stdout.lines)
            }
            let (launcher, launcherArguments) = lab.onHost("db", [])
            await #expect(throws: Planned.self) {
                try await PrivatePostgres.with(listeningOn: lab.address("db"), launcher: [launcher] + launcherArguments) { server in
                    directory.withLock { $0 = server.directory }
                    let url = try #require(server.tcpURL)
                    #expect(url.contains(lab.address("db")))
                    let reached = try await query(url)
                    #expect(reached.0 == 0 && reached.1 == ["1"], "\(reached)")
                    try await lab.cut("db")
                    let cutOff = try await query(url)
                    #expect(cutOff.0 != 0, "reached across the cut: \(cutOff)")
                    throw Planned()
                }
            }
            let removed = directory.withLock { $0 }.map { !FileManager.default.fileExists(atPath: $0.path) }
            #expect(removed == true, "the server's directory \(String(describing: directory.withLock { $0 })) was not removed")
        }
    }
}
