import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowClusterTesting

#if canImport(Glibc)
import Glibc
#endif

/// Sessions spread over two coordinator daemons (`durability-test-daemon`, sessions spread by a
/// lease per session) sharing one private PostgreSQL server, each with a worker of its own
/// hosting its sessions' remote children, real HTTP and WebSockets. Sessions are created on
/// both; one coordinator is SIGKILLed under a steady stream of events to every session, and its
/// sessions resume on the other: every event answered 202 applied exactly once where it was sent,
/// no client ever shown state going back.
@Suite("Sessions spread over coordinators", .serialized)
struct SpreadSessionProcessTests {
    typealias Acceptance = DurableAcceptanceProcessTests

    /// The session lease: twice the recommended one, so that a coordinator starved of CPU by the
    /// loaded test machine does not lose its sessions before the test kills it.
    static let leaseMilliseconds = 3_000

    struct Created: Decodable {
        var session: String
    }

    /// One session and everything its clients were told.
    struct Tracked: Sendable {
        var id: String
        var owner: Int
        var ledger = LedgerBox()
        var api: String { "/api/sessions/\(id)" }
    }

    @Test(
        "two coordinators share sessions through one PostgreSQL: a request for the other's session is redirected (307); one SIGKILLed under a stream of events, its sessions resume on the other, every event answered 202 applied once, sequences rising"
    )
    func sigkillOneOfTwo() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions test skipped: \(reason)") }
        try await PrivatePostgres.with { server in
            try await ClusterFixture.with("spread-sessions") { cluster in
                try Acceptance.writeConfig(
                    cluster, store: ["kind": "postgres", "url": server.url],
                    sessions: ["enabled": true, "idle_timeout_ms": 600_000, "spread_lease_ms": Self.leaseMilliseconds])
                let pair = try LocalSpreadPair(cluster: cluster)
                print("spread sessions: " + (try await Self.sigkillOne(pair)))
            }
        }
    }

    /// The scenario on `pair`: two sessions created on each coordinator; each asked of the other
    /// is redirected to its owner; coordinator 0 SIGKILLed under a stream of events to every
    /// session; its sessions, asked of coordinator 1, taken over and given more events; every
    /// accepted event applied exactly once. Returns the figures.
    static func sigkillOne(_ pair: some SpreadPair) async throws -> String {
        var coordinators: [DaemonProcess] = []
        var gateways: [GatewayClient] = []
        for index in 0..<2 {
            let coordinator = try pair.startCoordinator(index)
            coordinators.append(coordinator)
            gateways.append(try await pair.gateway(index, of: coordinator))
        }
        // Two sessions on each coordinator.
        var sessions: [Tracked] = []
        for owner in [0, 0, 1, 1] {
            let answer = try await gateways[owner].post("/api/sessions", json: #"{"root": "event-ledger"}"#)
            #expect(answer.status == 201, "\(answer.text)")
            sessions.append(Tracked(id: try JSONDecoder().decode(Created.self, from: answer.body).session, owner: owner))
        }
        var ready: [Acceptance.Ledgers] = []
        for (index, session) in sessions.enumerated() {
            ready.append(
                try await Acceptance.first("session \(index): both ledgers rendered", on: gateways[session.owner], api: session.api, ledger: session.ledger) {
                    $0.record != nil && $0.remote.available && $0.remote.record != nil
                })
        }
        // Asked of the other coordinator, a session is redirected to its owner's gateway.
        for session in sessions {
            let other = 1 - session.owner
            let answer = try await RawHTTP.get(port: pair.rawPort(other), path: session.api + "/rendering")
            #expect(
                answer.status == 307 && answer.location == pair.advertisedURL(session.owner) + session.api + "/rendering",
                "\(answer.status) \(answer.location ?? "no Location")")
        }

        // Events to every session at once; coordinator 0 is SIGKILLed after a random number
        // of its sessions' events are accepted; coordinator 1's sessions go on to their end.
        let killAfter = Int.random(in: 20...150)
        let victim = coordinators[0]
        let pid = victim.pid
        let trigger = KillTrigger(after: killAfter, pid: pid)
        let senders = ready
        await withTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                let gateway = gateways[session.owner]
                if session.owner == 0 {
                    group.addTask {
                        await Acceptance.send(to: gateway, api: session.api, from: senders[index], ledger: session.ledger) { _ in
                            trigger.accepted()
                        }
                    }
                } else {
                    group.addTask {
                        await Acceptance.send(to: gateway, api: session.api, from: senders[index], ledger: session.ledger, stopAt: 120)
                    }
                }
            }
        }
        if victim.isRunning { trigger.fire() }
        try await victim.waitForExit()
        #expect(victim.process.terminationReason == .uncaughtSignal, "coordinator 0 was not SIGKILLed")

        // The killed coordinator's sessions, asked of the survivor: redirected to the dead
        // one while its leases last, then taken over from the store.
        let survivor = gateways[1]
        var takeovers: [Int] = []
        for (index, session) in sessions.enumerated() where session.owner == 0 {
            try await withSafetyTimeout("session \(index) taken over by coordinator 1") {
                while true {
                    let answer = try await RawHTTP.get(port: pair.rawPort(1), path: session.api + "/rendering")
                    if answer.status == 200 { return }
                    #expect(answer.status == 307, "session \(index): \(answer.status)")
                    // Waiting for the database's clock to pass the dead owner's lease.
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            if let killed = trigger.firedAt { takeovers.append(Self.milliseconds(killed.duration(to: .now))) }
            let resumed = try await Acceptance.first(
                "session \(index): both ledgers rendered on coordinator 1", on: survivor, api: session.api, ledger: session.ledger
            ) { $0.record != nil && $0.remote.available && $0.remote.record != nil }
            // A token of the dead coordinator's rendering: restarted, never applied.
            if let old = ready[index].record {
                let answer = try await survivor.post(Acceptance.path(for: old, api: session.api), json: "0")
                #expect(answer.status == 410, "session \(index): \(answer.status) \(answer.text)")
            }
            let more = session.ledger.withLock { $0.accepted[0].count + $0.accepted[1].count } + 40
            await Acceptance.send(to: survivor, api: session.api, from: resumed, ledger: session.ledger, stopAt: more)
        }
        #expect(coordinators[1].stderr.lines.contains { $0.contains("session taken over from the store") })

        // Every session, on the survivor: every accepted event applied exactly once.
        for (index, session) in sessions.enumerated() {
            let accepted = session.ledger.withLock { $0.accepted }
            let final = try await Acceptance.first("session \(index): every accepted event applied", on: survivor, api: session.api, ledger: session.ledger) {
                shown in (0..<2).allSatisfy { sink in shown.ids(sink).map { accepted[sink].isSubset(of: $0) } ?? false }
            }
            session.ledger.withLock { $0.final = [final.ids, final.remote.ids] }
            let result = session.ledger.withLock { $0 }
            let inDoubtApplied = Acceptance.expectEachAcceptedAppliedOnce(result)
            print(
                "spread session \(index) (owner \(session.owner)): accepted \(result.accepted.map(\.count)) (root, remote), each applied once; "
                    + "in doubt \(result.inDoubt.map(\.count)), of which applied \(inDoubtApplied)")
        }
        return "coordinator 0 SIGKILLed after \(killAfter) accepted events; takeovers \(takeovers) ms after the kill"
    }
    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

/// Where a spread sessions test's two coordinators run, each with a worker of its own, and how
/// its clients reach their gateways: on this host (`LocalSpreadPair`) or on hosts of a network
/// lab (`SpreadLab`).
protocol SpreadPair: Sendable {
    /// Starts coordinator `index` (0 or 1), advertising `advertisedURL(index)`.
    func startCoordinator(_ index: Int) throws -> DaemonProcess
    /// Waits until coordinator `index` (`coordinator`) serves its gateway; returns a client of it.
    func gateway(_ index: Int, of coordinator: DaemonProcess) async throws -> GatewayClient
    /// The port on 127.0.0.1 this process reaches coordinator `index`'s gateway at.
    func rawPort(_ index: Int) -> Int
    /// Coordinator `index`'s advertised gateway (`http://127.0.0.1:rawPort`).
    func advertisedURL(_ index: Int) -> String
}

extension SpreadPair {
    func advertisedURL(_ index: Int) -> String { "http://127.0.0.1:\(rawPort(index))" }
}

/// Both coordinators on this host, over ipc, each with its worker; gateways on free loopback
/// ports.
struct LocalSpreadPair: SpreadPair {
    let cluster: ClusterFixture
    let endpoints: [String]
    let ports: [Int]

    /// Starts both workers (each joining its own coordinator's endpoint).
    init(cluster: ClusterFixture) throws {
        self.cluster = cluster
        endpoints = [cluster.endpoint, cluster.endpoint + "-b"]
        ports = [try LoopbackPort.unused(), try LoopbackPort.unused()]
        for index in 0..<2 {
            _ = try cluster.start(
                "durability-test-daemon", ["--config", cluster.configPath, "--name", "w1", "--endpoint", endpoints[index]],
                label: "w1-\(index)", environment: ["DURABILITY_TEST_ROLE": "worker"])
        }
    }

    func startCoordinator(_ index: Int) throws -> DaemonProcess {
        try cluster.start(
            "durability-test-daemon",
            [
                "--config", cluster.configPath, "--print-renderings", "json", "--endpoint", endpoints[index],
                "--gateway-listen", "127.0.0.1:\(ports[index])", "--sessions-advertised-url", advertisedURL(index),
            ], label: "coordinator-\(index)")
    }

    func gateway(_ index: Int, of coordinator: DaemonProcess) async throws -> GatewayClient {
        try await GatewayClient.of(coordinator)
    }

    func rawPort(_ index: Int) -> Int { ports[index] }
}

/// One HTTP/1.1 GET over a plain socket, its redirects not followed: what a browser's first
/// answer is.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The status and `Location` of `GET path` at `127.0.0.1:port`, with `headers` (each line
    /// ending in CRLF).
    static func get(port: Int, path: String, headers: String = "") async throws -> (status: Int, location: String?) {
        try await Task.detached { try Self.blockingGet(port: port, path: path, headers: headers) }.value
    }

    private static func blockingGet(port: Int, path: String, headers: String) throws -> (status: Int, location: String?) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)") }
        let request = Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n" + (headers.isEmpty ? "Connection: close\r\n" : headers) + "\r\n").utf8)
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure(description: "cannot send the request: errno \(errno)")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Up to the end of the head: a connection asked to upgrade may stay open after it.
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while !(received.count >= 4 && (0...(received.count - 4)).contains { Array(received[$0..<($0 + 4)]) == end }) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let head = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n\r\n").first ?? ""
        let lines = head.components(separatedBy: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "no HTTP answer: \(head.prefix(200))") }
        let location = lines.dropFirst().first { $0.lowercased().hasPrefix("location:") }.map {
            String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces)
        }
        return (status, location)
    }
}

/// SIGKILLs a process once `after` events were accepted, remembering when.
private final class KillTrigger: Sendable {
    private struct State {
        var accepted = 0
        var firedAt: ContinuousClock.Instant?
    }

    private let after: Int
    private let pid: pid_t
    private let state = Mutex(State())

    init(after: Int, pid: pid_t) {
        self.after = after
        self.pid = pid
    }

    /// One more event accepted: the process is killed at the `after`th.
    func accepted() {
        let due = state.withLock { state in
            state.accepted += 1
            return state.accepted == after
        }
        if due { fire() }
    }

    /// Kills the process now (once).
    func fire() {
        let first = state.withLock { state in
            defer { state.firedAt = state.firedAt ?? .now }
            return state.firedAt == nil
        }
        if first { kill(pid, SIGKILL) }
    }

    /// When it was killed.
    var firedAt: ContinuousClock.Instant? { state.withLock { $0.firedAt } }
}
