import Foundation
import RemoteTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Accepted events survive coordinator SIGKILLs: real daemons (`durability-test-coordinator`
/// with the embedded SQLite store, `remote-test-worker` hosting the remote counter), real HTTP.
@Suite("Durable acceptance across coordinator SIGKILLs", .serialized)
struct DurableAcceptanceProcessTests {
    /// What the clients read of the `durable-tally` root's rendering.
    struct Tally: Decodable, Sendable {
        struct Remote: Decodable, Sendable {
            var count: Int
            var onIncrement: String?
        }
        var local: Int
        var add: String?
        var remote: Remote
    }

    /// Everything the clients were told and saw, across every coordinator incarnation. Index 0
    /// is the root's own count, 1 the remote counter's.
    struct Ledger: Sendable {
        /// Events answered 202.
        var accepted = [0, 0]
        /// Events sent whose answer never came (the coordinator died with them in flight) or
        /// that were answered not-durable: each may or may not have taken effect.
        var inDoubt = [0, 0]
        /// The highest sequence and counts any client saw.
        var highestSequence: UInt64 = 0
        var highest = [0, 0]
        /// Every time a client saw something lower than it had seen before.
        var backwards: [String] = []
        var unexpected: [String] = []

        /// Records a rendering a client saw.
        mutating func saw(sequence: UInt64, _ tally: Tally) {
            if sequence < highestSequence { backwards.append("sequence \(sequence) after \(highestSequence)") }
            highestSequence = max(highestSequence, sequence)
            if tally.local < highest[0] { backwards.append("local count \(tally.local) after \(highest[0])") }
            highest[0] = max(highest[0], tally.local)
            // -1 is the remote counter's placeholder (its worker has not rendered it yet after a
            // restart): not a state, a "not available" (issue 21 item 4 replaces it).
            if tally.remote.count >= 0 {
                if tally.remote.count < highest[1] { backwards.append("remote count \(tally.remote.count) after \(highest[1])") }
                highest[1] = max(highest[1], tally.remote.count)
            }
        }
    }

    static let port = 47_601

    /// The cluster's configuration: the durable-tally root, the counter on worker `w1`, the
    /// embedded store in the fixture's directory.
    static func writeConfig(_ cluster: ClusterFixture) throws {
        let document: [String: Any] = [
            "coordinator": ["endpoint": cluster.endpoint, "root": "durable-tally"],
            "workers": [["name": "w1"]],
            "heartbeat": ["interval_ms": 100, "liveness": 5],
            "request": ["deadline_ms": 10_000],
            "log": ["level": "info", "format": "text"],
            "placement": [["match": "RemoteTestSupport.CounterWorkflow", "worker": "w1"]],
            "gateway": ["listen": "127.0.0.1:\(port)"],
            "security": ["mode": "plaintext"],
            "store": ["kind": "sqlite", "path": "store.sqlite"],
        ]
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: cluster.configPath))
    }

    static func decode(_ data: Data) throws -> StreamedRendering<Tally> {
        try JSONDecoder().decode(StreamedRendering<Tally>.self, from: data)
    }

    static func path(for token: String) -> String {
        "/api/events/" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
    }

    /// Whether `error` says nothing was sent (no connection), so the event cannot have arrived.
    static func neverSent(_ error: any Error) -> Bool {
        guard let error = error as? URLError else { return false }
        return error.code == .cannotConnectToHost
    }

    @Test("every event answered 202 takes effect exactly once across coordinator SIGKILLs at random moments; no client sees state go back")
    func sigkillUnderAcceptedEvents() async throws {
        try await ClusterFixture.with("durable-sigkill") { cluster in
            try Self.writeConfig(cluster)
            let ledger = LedgerBox()
            _ = try cluster.start("remote-test-worker", ["--name", "w1", "--connect", cluster.endpoint], label: "w1")
            let kills = 4
            for round in 0...kills {
                let coordinator = try cluster.start(
                    "durability-test-coordinator", ["--config", cluster.configPath, "--print-renderings", "json"], label: "coordinator")
                let gateway = try await GatewayClient.of(coordinator)
                let watcher = Task {
                    // Every rendering any client is shown, checked against what was shown before.
                    try? await gateway.stream { text in
                        let message = try Self.decode(Data(text.utf8))
                        ledger.withLock { $0.saw(sequence: message.sequence, message.rendering) }
                        return false
                    }
                }
                defer { watcher.cancel() }
                if round == kills {
                    // The last incarnation: nothing more is sent; every accepted event must show,
                    // none more than once.
                    let (accepted, inDoubt) = ledger.withLock { ($0.accepted, $0.inDoubt) }
                    let final = try await withSafetyTimeout("every accepted event applied (accepted \(accepted))") {
                        let last = LatestTally()
                        try await gateway.stream { text in
                            let tally = try Self.decode(Data(text.utf8)).rendering
                            last.set(tally)
                            return tally.local >= accepted[0] && tally.remote.count >= accepted[1]
                        }
                        return try #require(last.value)
                    }
                    #expect(final.local <= accepted[0] + inDoubt[0], "root count \(final.local): accepted \(accepted[0]), in doubt \(inDoubt[0])")
                    #expect(
                        final.remote.count <= accepted[1] + inDoubt[1],
                        "remote count \(final.remote.count): accepted \(accepted[1]), in doubt \(inDoubt[1])")
                    break
                }
                // Both sinks live (the remote counter rendered by its worker) before sending.
                let ready = try await withSafetyTimeout("both sinks rendered") {
                    let found = LatestTally()
                    try await gateway.stream { text in
                        let tally = try Self.decode(Data(text.utf8)).rendering
                        guard tally.add != nil, tally.remote.onIncrement != nil, tally.remote.count >= 0 else { return false }
                        found.set(tally)
                        return true
                    }
                    return try #require(found.value)
                }
                let killAfter = ledger.withLock { $0.accepted.reduce(0, +) } + Int.random(in: 1...150)
                let pid = coordinator.pid
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for sender in 0..<4 {
                        group.addTask {
                            var tally = ready
                            var next = sender
                            while true {
                                let sink = tally.remote.onIncrement == nil ? 0 : next % 2
                                next += 1
                                guard let token = sink == 0 ? tally.add : tally.remote.onIncrement else { return }
                                let answer: GatewayClient.Answer
                                do {
                                    answer = try await gateway.post(Self.path(for: token), json: "1")
                                } catch {
                                    if !Self.neverSent(error) { ledger.withLock { $0.inDoubt[sink] += 1 } }
                                    return
                                }
                                switch answer.status {
                                case 202:
                                    let total = ledger.withLock { ledger in
                                        ledger.accepted[sink] += 1
                                        return ledger.accepted.reduce(0, +)
                                    }
                                    if total == killAfter { kill(pid, SIGKILL) }
                                case 404, 410, 429:
                                    // A token of an older rendering, or back-pressure: read the
                                    // current rendering's tokens (nothing was applied).
                                    guard let fresh = try? await gateway.get("/api/rendering"), fresh.status == 200 else { return }
                                    let message = try Self.decode(fresh.body)
                                    ledger.withLock { $0.saw(sequence: message.sequence, message.rendering) }
                                    tally = message.rendering
                                case 503:
                                    ledger.withLock { $0.inDoubt[sink] += 1 }
                                    return
                                default:
                                    ledger.withLock { $0.unexpected.append("\(answer.status): \(answer.text)") }
                                    return
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // The senders stop when the coordinator is gone (or, if one failed first, here).
                if coordinator.isRunning { kill(pid, SIGKILL) }
                try await coordinator.waitForExit()
                #expect(coordinator.process.terminationReason == .uncaughtSignal, "round \(round): the coordinator was not SIGKILLed")
            }
            let result = ledger.withLock { $0 }
            #expect(result.backwards.isEmpty, "a client saw state go back: \(result.backwards)")
            #expect(result.unexpected.isEmpty, "unexpected answers: \(result.unexpected)")
            #expect(result.accepted[0] > 0 && result.accepted[1] > 0, "events accepted: \(result.accepted)")
            print("durable acceptance: accepted \(result.accepted), in doubt \(result.inDoubt) over \(kills) coordinator SIGKILLs")
        }
    }
}

/// The latest rendering a stream reader kept, for the task that waits on the stream.
private final class LatestTally: Sendable {
    private let latest = Mutex<DurableAcceptanceProcessTests.Tally?>(nil)

    func set(_ tally: DurableAcceptanceProcessTests.Tally) { latest.withLock { $0 = tally } }

    var value: DurableAcceptanceProcessTests.Tally? { latest.withLock { $0 } }
}

/// The clients' shared ledger.
private final class LedgerBox: Sendable {
    private let ledger = Mutex(DurableAcceptanceProcessTests.Ledger())

    func withLock<T>(_ body: (inout DurableAcceptanceProcessTests.Ledger) -> T) -> T { ledger.withLock { body(&$0) } }
}
