import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowClusterTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Accepted events survive coordinator SIGKILLs: real daemons (`durability-test-daemon` as the
/// coordinator, with each store: an SQLite file and a private PostgreSQL server, and as the
/// worker hosting the remote child),
/// real HTTP. Every event carries a unique id and both ledgers render the ids they applied, in
/// order, so "exactly once" is checked per event, not as a count.
@Suite("Durable acceptance across coordinator SIGKILLs", .serialized)
struct DurableAcceptanceProcessTests {
    /// What the clients read of the `event-ledger` root's rendering.
    struct Ledgers: Decodable, Sendable {
        struct Remote: Decodable, Sendable {
            var available: Bool
            var ids: [Int]
            var record: String?
        }
        var ids: [Int]
        var record: String?
        var remote: Remote

        /// The ids of ledger `sink` (0: the root's, 1: the remote child's; `nil` while the remote
        /// child shows its placeholder).
        func ids(_ sink: Int) -> [Int]? { sink == 0 ? ids : (remote.available ? remote.ids : nil) }
        func token(_ sink: Int) -> String? { sink == 0 ? record : remote.record }
    }

    /// Everything the clients were told and saw, across every coordinator incarnation.
    struct Ledger: Sendable {
        var nextID = 0
        /// Ids answered 202, per sink.
        var accepted: [Set<Int>] = [[], []]
        /// Ids sent whose answer never came (the coordinator died with them in flight) or that
        /// were answered not-durable: each may have taken effect once, or not at all.
        var inDoubt: [Set<Int>] = [[], []]
        /// The longest id list each client was shown, per sink: a later one must extend it.
        /// Per client: the answers to two clients' concurrent requests may arrive in either order.
        var shown: [Int: [[Int]]] = [:]
        var highestSequence: [Int: UInt64] = [:]
        var backwards: [String] = []
        var unexpected: [String] = []
        var final: [[Int]] = [[], []]
        /// A root token of the previous coordinator incarnation.
        var lastToken: String?

        mutating func newID() -> Int {
            nextID += 1
            return nextID
        }

        /// Records a rendering `client` was shown (the watcher is -1, the readiness reader -2, each
        /// sender its number; each the same client across coordinator restarts):
        /// nothing that client had been shown may be missing, and its sequence never goes back.
        mutating func saw(client: Int, sequence: UInt64, _ ledgers: Ledgers) {
            let highest = highestSequence[client, default: 0]
            if sequence < highest { backwards.append("client \(client): sequence \(sequence) after \(highest)") }
            highestSequence[client] = max(highest, sequence)
            var shown = self.shown[client, default: [[], []]]
            for sink in 0..<2 {
                guard let ids = ledgers.ids(sink) else { continue }
                let longer = ids.count >= shown[sink].count
                let (short, long) = longer ? (shown[sink], ids) : (ids, shown[sink])
                if Array(long.prefix(short.count)) != short || !longer {
                    backwards.append(
                        "client \(client), ledger \(sink): shown \(ids.count) ids \(ids.suffix(5)) after \(shown[sink].count) ids \(shown[sink].suffix(5))")
                }
                if longer { shown[sink] = ids }
            }
            self.shown[client] = shown
        }
    }

    /// The cluster's configuration: the event-ledger root, its remote child on worker `w1`,
    /// the store `store` names (the configuration file's `store` section; default: an SQLite
    /// file in the fixture's directory). The gateway listens on `port`, by default a free one:
    /// each incarnation prints the one it got. `endpoints`: several coordinators' (a leader
    /// and its standbys), instead of the fixture's one. `sessions`: the `sessions` section (none:
    /// sessions off). `heartbeat` and `security`: those sections (a network lab's daemons are on
    /// network addresses).
    static func writeConfig(
        _ cluster: ClusterFixture, store: [String: Any] = ["kind": "sqlite", "path": "store.sqlite"], port: Int = 0, endpoints: [String]? = nil,
        sessions: [String: Any]? = nil,
        heartbeat: [String: Int] = ["interval_ms": 100, "liveness": 5], security: [String: Any] = ["mode": "plaintext"]
    ) throws {
        let coordinator: [String: Any] =
            if let endpoints { ["endpoints": endpoints, "root": "event-ledger"] } else { ["endpoint": cluster.endpoint, "root": "event-ledger"] }
        var document: [String: Any] = [
            "coordinator": coordinator,
            "workers": [["name": "w1"]],
            "heartbeat": heartbeat,
            "request": ["deadline_ms": 10_000],
            "log": ["level": "info", "format": "text"],
            "placement": [["match": "*EventLedgerWorkflow", "worker": "w1"]],
            "gateway": ["listen": "127.0.0.1:\(port)"],
            "security": security,
            "store": store,
        ]
        if let sessions { document["sessions"] = sessions }
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: cluster.configPath))
    }

    static func decode(_ data: Data) throws -> StreamedRendering<Ledgers> {
        try JSONDecoder().decode(StreamedRendering<Ledgers>.self, from: data)
    }

    /// The route of `token` under `api` (`/api`: the shared root's; `/api/sessions/ID`: a
    /// session's).
    static func path(for token: String, api: String = "/api") -> String {
        api + "/events/" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
    }

    /// The first rendering on `gateway`'s stream under `api` satisfying `predicate` (each one
    /// shown is recorded in `ledger`).
    static func first(
        _ what: String, on gateway: GatewayClient, api: String = "/api", ledger: LedgerBox, where predicate: @escaping @Sendable (Ledgers) -> Bool
    ) async throws -> Ledgers {
        try await withSafetyTimeout(what) {
            let found = LatestLedgers()
            try await gateway.stream(api + "/renderings") { text in
                let message = try Self.decode(Data(text.utf8))
                ledger.withLock { $0.saw(client: -2, sequence: message.sequence, message.rendering) }
                guard predicate(message.rendering) else { return false }
                found.set(message.rendering)
                return true
            }
            return try #require(found.value, "the stream ended before \(what)")
        }
    }

    /// Four clients sending events to `gateway`'s tree under `api` (each id to one of the two
    /// ledgers, by the tokens of `ready`, then of the renderings they read), recording every
    /// answer in `ledger`, until the coordinator is gone (a request fails or is answered 503) or
    /// `stopAt` events in all are accepted. `accepted` is told the total after each 202.
    static func send(
        to gateway: GatewayClient, api: String = "/api", from ready: Ledgers, ledger: LedgerBox, stopAt: Int = .max,
        accepted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    var ledgers = ready
                    var next = sender
                    while ledger.withLock({ $0.accepted[0].count + $0.accepted[1].count }) < stopAt {
                        let sink = ledgers.token(1) == nil ? 0 : next % 2
                        next += 1
                        guard let token = ledgers.token(sink) else { return }
                        let id = ledger.withLock { $0.newID() }
                        let answer: GatewayClient.Answer
                        do {
                            answer = try await gateway.post(Self.path(for: token, api: api), json: "\(id)")
                        } catch {
                            // In doubt even when the client reports "cannot connect": it
                            // may have sent the request on a kept-alive connection first,
                            // which the coordinator applied before it died.
                            ledger.withLock { _ = $0.inDoubt[sink].insert(id) }
                            return
                        }
                        switch answer.status {
                        case 202:
                            accepted(
                                ledger.withLock { ledger in
                                    ledger.accepted[sink].insert(id)
                                    return ledger.accepted[0].count + ledger.accepted[1].count
                                })
                        case 404, 410, 429:
                            // A token of an older rendering, or back-pressure: nothing was
                            // applied; read the current rendering's tokens.
                            guard let fresh = try? await gateway.get(api + "/rendering"), fresh.status == 200 else { return }
                            guard let message = try? Self.decode(fresh.body) else {
                                ledger.withLock { $0.unexpected.append("an undecodable rendering: \(fresh.text)") }
                                return
                            }
                            ledger.withLock { $0.saw(client: sender, sequence: message.sequence, message.rendering) }
                            ledgers = message.rendering
                        case 503:
                            ledger.withLock { _ = $0.inDoubt[sink].insert(id) }
                            return
                        default:
                            ledger.withLock { $0.unexpected.append("\(answer.status): \(answer.text)") }
                            return
                        }
                    }
                }
            }
        }
    }

    /// Checks `result`'s final ledgers: every id answered 202 shows exactly once where it was
    /// sent, nothing shows that was not sent there, no client saw state go back, no answer was
    /// unexpected. Returns how many in-doubt ids took effect, per sink.
    @discardableResult
    static func expectEachAcceptedAppliedOnce(_ result: Ledger, sourceLocation: SourceLocation = #_sourceLocation) -> [Int] {
        for sink in 0..<2 {
            let applied = result.final[sink]
            let counts = Dictionary(applied.map { ($0, 1) }, uniquingKeysWith: +)
            let twice = counts.filter { $0.value > 1 }.keys.sorted()
            #expect(twice.isEmpty, "ledger \(sink): applied more than once: \(twice)", sourceLocation: sourceLocation)
            let missing = result.accepted[sink].subtracting(applied).sorted()
            #expect(missing.isEmpty, "ledger \(sink): accepted and lost: \(missing)", sourceLocation: sourceLocation)
            let unknown = Set(applied).subtracting(result.accepted[sink]).subtracting(result.inDoubt[sink]).sorted()
            #expect(unknown.isEmpty, "ledger \(sink): applied but never sent there: \(unknown)", sourceLocation: sourceLocation)
        }
        #expect(result.backwards.isEmpty, "a client saw state go back: \(result.backwards)", sourceLocation: sourceLocation)
        #expect(result.unexpected.isEmpty, "unexpected answers: \(result.unexpected)", sourceLocation: sourceLocation)
        #expect(!result.accepted[0].isEmpty && !result.accepted[1].isEmpty, "events accepted: \(result.accepted.map(\.count))", sourceLocation: sourceLocation)
        return (0..<2).map { Set(result.final[$0]).intersection(result.inDoubt[$0]).count }
    }

    @Test(
        "every event answered 202 takes effect exactly once across 20 coordinator SIGKILLs at random moments; no client sees state go back",
        arguments: StoreBackend.allCases)
    func sigkillUnderAcceptedEvents(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("durable-sigkill") { store in
            try await Self.sigkillUnderAcceptedEvents(store: store)
        }
    }

    static func sigkillUnderAcceptedEvents(store: [String: String]) async throws {
        try await ClusterFixture.with("durable-sigkill") { cluster in
            try Self.writeConfig(cluster, store: store)
            let ledger = LedgerBox()
            let worker = try cluster.start(
                "durability-test-daemon", ["--config", cluster.configPath, "--name", "w1"], label: "w1",
                environment: ["DURABILITY_TEST_ROLE": "worker"])
            _ = worker
            let kills = 20
            for round in 0...kills {
                let coordinator = try cluster.start(
                    "durability-test-daemon", ["--config", cluster.configPath, "--print-renderings", "json"], label: "coordinator")
                let gateway = try await GatewayClient.of(coordinator)
                let watcher = Task {
                    // Every rendering a client is shown, checked against what was shown before.
                    try? await gateway.stream { text in
                        let message = try Self.decode(Data(text.utf8))
                        ledger.withLock { $0.saw(client: -1, sequence: message.sequence, message.rendering) }
                        return false
                    }
                }
                defer { watcher.cancel() }
                if round == kills {
                    // The last incarnation: nothing more is sent; every accepted id must show.
                    let accepted = ledger.withLock { $0.accepted }
                    let final = try await Self.first("every accepted event applied", on: gateway, ledger: ledger) { ledgers in
                        (0..<2).allSatisfy { sink in ledgers.ids(sink).map { accepted[sink].isSubset(of: $0) } ?? false }
                    }
                    ledger.withLock { $0.final = [final.ids, final.remote.ids] }
                    break
                }
                // Both sinks live (the remote child rendered by its worker) before sending.
                let ready = try await Self.first("both ledgers rendered", on: gateway, ledger: ledger) { ledgers in
                    ledgers.record != nil && ledgers.remote.available && ledgers.remote.record != nil
                }
                if let previous = ledger.withLock({ $0.lastToken }) {
                    // A token of the killed coordinator's renderings: not unknown, restarted.
                    let answer = try await gateway.post(Self.path(for: previous), json: "0")
                    #expect(answer.status == 410 && answer.text.contains("restarted"), "round \(round): \(answer.status) \(answer.text)")
                }
                ledger.withLock { $0.lastToken = ready.record }
                let killAfter = ledger.withLock { $0.accepted[0].count + $0.accepted[1].count } + Int.random(in: 1...150)
                let pid = coordinator.pid
                await Self.send(to: gateway, from: ready, ledger: ledger) { total in
                    if total == killAfter { kill(pid, SIGKILL) }
                }
                // The senders stop when the coordinator is gone (or, if one failed first, here).
                if coordinator.isRunning { kill(pid, SIGKILL) }
                try await coordinator.waitForExit()
                #expect(coordinator.process.terminationReason == .uncaughtSignal, "round \(round): the coordinator was not SIGKILLed")
            }
            let result = ledger.withLock { $0 }
            let inDoubtApplied = Self.expectEachAcceptedAppliedOnce(result)
            print(
                "durable acceptance (\(store["kind"] ?? "")): accepted \(result.accepted.map(\.count)) (root, remote), each applied once; "
                    + "in doubt \(result.inDoubt.map(\.count)), of which applied \(inDoubtApplied); \(kills) coordinator SIGKILLs")
        }
    }
}

/// The clients' shared ledger.
final class LedgerBox: Sendable {
    private let ledger = Mutex(DurableAcceptanceProcessTests.Ledger())

    func withLock<T>(_ body: (inout DurableAcceptanceProcessTests.Ledger) -> T) -> T { ledger.withLock { body(&$0) } }
}

/// The rendering a stream reader kept, for the task that waits on the stream.
private final class LatestLedgers: Sendable {
    private let latest = Mutex<DurableAcceptanceProcessTests.Ledgers?>(nil)

    func set(_ ledgers: DurableAcceptanceProcessTests.Ledgers) { latest.withLock { $0 = ledgers } }

    var value: DurableAcceptanceProcessTests.Ledgers? { latest.withLock { $0 } }
}
