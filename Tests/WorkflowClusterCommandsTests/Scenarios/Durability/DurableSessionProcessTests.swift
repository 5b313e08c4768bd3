import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sessions survive coordinator SIGKILLs: real daemons (`durability-test-daemon` as the
/// coordinator with sessions on, with each store, and as the worker hosting every session's
/// remote child), real HTTP and WebSockets. Two sessions of the `event-ledger` root are created
/// once; every later coordinator incarnation resumes both from the store, and each accepted
/// event (answered 202) shows exactly once, in the session and ledger it was sent to.
@Suite("Durable sessions across coordinator SIGKILLs", .serialized)
struct DurableSessionProcessTests {
    typealias Acceptance = DurableAcceptanceProcessTests

    struct Created: Decodable {
        var session: String
    }

    @Test(
        "two sessions resume after each of 3 coordinator SIGKILLs with their state: every event answered 202 applied once, sequences rising, old tokens 410, forged ids 404",
        arguments: StoreBackend.allCases)
    func sessionsSurviveSigkill(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("durable-sessions") { store in
            try await ClusterFixture.with("durable-sessions") { cluster in
                try Acceptance.writeConfig(cluster, store: store, sessions: ["enabled": true, "idle_timeout_ms": 600_000])
                let worker = try cluster.start(
                    "durability-test-daemon", ["--config", cluster.configPath, "--name", "w1"], label: "w1",
                    environment: ["DURABILITY_TEST_ROLE": "worker"])
                _ = worker
                let ledgers = [LedgerBox(), LedgerBox()]
                var sessions: [String] = []
                var lastTokens: [String?] = [nil, nil]
                let kills = 3
                for round in 0...kills {
                    let coordinator = try cluster.start(
                        "durability-test-daemon", ["--config", cluster.configPath, "--print-renderings", "json"], label: "coordinator")
                    let gateway = try await GatewayClient.of(coordinator)
                    if round == 0 {
                        for _ in 0..<2 {
                            let answer = try await gateway.post("/api/sessions", json: #"{"root": "event-ledger"}"#)
                            #expect(answer.status == 201, "\(answer.text)")
                            sessions.append(try JSONDecoder().decode(Created.self, from: answer.body).session)
                        }
                    } else {
                        // After the restart, an id the store never held is unknown, as before.
                        let forged = String(sessions[0].dropLast()) + (sessions[0].hasSuffix("0") ? "1" : "0")
                        for id in [forged, "0123456789abcdef0123456789abcdef"] {
                            let answer = try await gateway.get("/api/sessions/\(id)/rendering")
                            #expect(answer.status == 404 && answer.text.contains("unknown-session"), "round \(round): \(answer.status) \(answer.text)")
                        }
                    }
                    let apis = sessions.map { "/api/sessions/\($0)" }
                    if round == kills {
                        // The last incarnation: every accepted id of each session must show.
                        for index in 0..<2 {
                            let accepted = ledgers[index].withLock { $0.accepted }
                            let final = try await Acceptance.first(
                                "session \(index): every accepted event applied", on: gateway, api: apis[index], ledger: ledgers[index]
                            ) { shown in
                                (0..<2).allSatisfy { sink in shown.ids(sink).map { accepted[sink].isSubset(of: $0) } ?? false }
                            }
                            ledgers[index].withLock { $0.final = [final.ids, final.remote.ids] }
                        }
                        break
                    }
                    // Each session's both sinks live (its remote child rendered by the worker).
                    var ready: [Acceptance.Ledgers] = []
                    for index in 0..<2 {
                        ready.append(
                            try await Acceptance.first("session \(index): both ledgers rendered", on: gateway, api: apis[index], ledger: ledgers[index]) {
                                $0.record != nil && $0.remote.available && $0.remote.record != nil
                            })
                    }
                    for index in 0..<2 {
                        if let previous = lastTokens[index] {
                            // A token of the killed coordinator's rendering of this session: 410.
                            let answer = try await gateway.post(Acceptance.path(for: previous, api: apis[index]), json: "0")
                            #expect(answer.status == 410 && answer.text.contains("restarted"), "round \(round): \(answer.status) \(answer.text)")
                        }
                        lastTokens[index] = ready[index].record
                    }
                    // Events to both sessions at once; the coordinator is SIGKILLed after a random
                    // number more of them are accepted.
                    let total = AcceptedCount()
                    let killAfter = Int.random(in: 20...150)
                    let pid = coordinator.pid
                    let senders = ready
                    await withTaskGroup(of: Void.self) { group in
                        for index in 0..<2 {
                            group.addTask {
                                await Acceptance.send(to: gateway, api: apis[index], from: senders[index], ledger: ledgers[index]) { _ in
                                    if total.increment() == killAfter { kill(pid, SIGKILL) }
                                }
                            }
                        }
                    }
                    if coordinator.isRunning { kill(pid, SIGKILL) }
                    try await coordinator.waitForExit()
                    #expect(coordinator.process.terminationReason == .uncaughtSignal, "round \(round): the coordinator was not SIGKILLed")
                }
                for index in 0..<2 {
                    let result = ledgers[index].withLock { $0 }
                    let inDoubtApplied = Acceptance.expectEachAcceptedAppliedOnce(result)
                    print(
                        "durable session \(index) (\(store["kind"] ?? "")): accepted \(result.accepted.map(\.count)) (root, remote), each applied once; "
                            + "in doubt \(result.inDoubt.map(\.count)), of which applied \(inDoubtApplied); \(kills) coordinator SIGKILLs")
                }
            }
        }
    }
}

/// How many events the clients of both sessions were answered 202 for, in this incarnation.
private final class AcceptedCount: Sendable {
    private let count = Mutex(0)

    /// Counts one more; returns the new count.
    func increment() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
