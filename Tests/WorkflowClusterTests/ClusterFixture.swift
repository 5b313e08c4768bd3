import RemoteTestSupport
import Foundation
import Synchronization
import Testing

/// A test's cluster: a configuration file on a unique ipc endpoint and the daemons it started.
///
/// Every daemon is started through the fixture, so `shutDown()` can stop them all (SIGTERM, then
/// SIGKILL if one does not exit) and check that none is left running, whether the test passed
/// or failed.
final class ClusterFixture: Sendable {
    let directory: URL
    let configPath: String
    let endpoint: String
    private let daemons = Mutex<[DaemonProcess]>([])

    /// A placement rule as the configuration file spells it.
    typealias Rule = [String: String]

    /// Inbox on worker-1, message on worker-2: the demo's placement.
    static let demoPlacement: [Rule] = [
        ["match": "WorkflowExamples.InboxWorkflow", "worker": "worker-1"],
        ["match": "WorkflowExamples.MessageWorkflow", "worker": "worker-2"],
    ]

    /// A CURVE `security` section for keys `keygen` wrote into `keys` (relative to the config).
    static func curveSecurity(keys: String = "keys") -> [String: String] {
        [
            "mode": "curve", "server_public_key": "\(keys)/coordinator.pub", "server_secret_key": "\(keys)/coordinator.key",
            "allowed_client_keys": "\(keys)/allowed-workers", "client_keys_dir": "\(keys)/workers",
        ]
    }

    init(_ name: String, placement: [Rule] = demoPlacement) throws {
        let unique = "\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-cluster-\(unique)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent("cluster.json").path
        endpoint = "ipc://" + directory.appendingPathComponent("endpoint").path
        try writeConfig(placement: placement)
    }

    /// Where tests have `keygen` write CURVE keys (what `curveSecurity()` points at).
    var keysDirectory: String { directory.appendingPathComponent("keys").path }

    /// The demo's two workers, as the configuration file lists them.
    static let demoWorkers: [Rule] = [["name": "worker-1", "pool": "inbox"], ["name": "worker-2", "pool": "messages"]]

    /// Rewrites the configuration file with `placement`, `security` (`nil`: no `security`
    /// section), `workers`, `endpoint` (default: the fixture's private ipc endpoint), `heartbeat`
    /// (default 100 ms × 5) and `drain` (default: no section).
    func writeConfig(
        placement: [Rule], security: [String: String]? = ["mode": "plaintext"], workers: [Rule] = demoWorkers,
        endpoint: String? = nil, heartbeat: [String: Int] = ["interval_ms": 100, "liveness": 5], drain: [String: Int]? = nil
    ) throws {
        var document: [String: Any] = [
            "coordinator": ["endpoint": endpoint ?? self.endpoint, "root": "email-browser"],
            "workers": workers,
            "heartbeat": heartbeat,
            "request": ["deadline_ms": 10_000],
            "log": ["level": "info", "format": "text"],
            "placement": placement,
            // Every test cluster serves its gateway on a free loopback port (printed by the
            // coordinator), as the shipped configuration does on 8570.
            "gateway": ["listen": "127.0.0.1:0"],
        ]
        if let security { document["security"] = security }
        if let drain { document["drain"] = drain }
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts the coordinator printing JSON lines (renderings and statuses) and waits until it
    /// listens.
    @discardableResult
    func startCoordinator(_ extra: [String] = []) async throws -> DaemonProcess {
        let coordinator = try start("workflow-coordinator", ["--config", configPath, "--print-renderings", "json"] + extra, label: "coordinator")
        do {
            try await coordinator.stdout.first("the coordinator to listen") { $0.contains(#""event":"listening""#) }
        } catch {
            throw WaitFailure(description: "\(error); its log:\n\(coordinator.stderr.lines.joined(separator: "\n"))")
        }
        return coordinator
    }

    /// Starts a worker named `name` (with `extra` arguments) and waits until the coordinator
    /// welcomed it.
    @discardableResult
    func startWorker(_ name: String, _ extra: [String] = []) async throws -> DaemonProcess {
        let worker = try start("workflow-worker", ["--config", configPath, "--name", name] + extra, label: name)
        do {
            try await worker.stderr.first("\(name) to be welcomed") { $0.contains("welcomed by the parent") }
        } catch {
            throw WaitFailure(description: "\(error); its log:\n\(worker.stderr.lines.joined(separator: "\n"))")
        }
        return worker
    }

    /// Starts any daemon through the fixture (so it is cleaned up).
    func start(_ executable: String, _ arguments: [String], label: String, environment: [String: String] = [:]) throws -> DaemonProcess {
        let daemon = try DaemonProcess(executable, arguments, label: label, environment: environment)
        daemons.withLock { $0.append(daemon) }
        return daemon
    }

    /// Stops every daemon still running (workers first, SIGTERM then SIGKILL after a bound),
    /// removes the files, and records a test issue if any daemon survived.
    func shutDown() async {
        let started = daemons.withLock { $0 }
        for daemon in started.reversed() where daemon.isRunning {
            kill(daemon.pid, SIGTERM)
            if (try? await daemon.waitForExit()) == nil { daemon.forceKill() }
        }
        for daemon in started {
            #expect(!daemon.isRunning, "\(daemon.label) (pid \(daemon.pid)) is still running")
        }
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
    }

    /// The latest daemon started under `label`.
    func daemon(labelled label: String) -> DaemonProcess? {
        daemons.withLock { $0 }.last { $0.label == label }
    }

    /// Everything every daemon wrote so far, standard output and standard error.
    var allOutput: String {
        daemons.withLock { $0 }.map { ($0.stdout.lines + $0.stderr.lines).joined(separator: "\n") }.joined(separator: "\n")
    }

    /// Attaches the end of every daemon's log to the test's issues (for diagnosing a failure).
    func recordLogs() {
        for daemon in daemons.withLock({ $0 }) {
            let tail = daemon.stderr.lines.suffix(30).joined(separator: "\n")
            Issue.record(Comment(rawValue: "\(daemon.label) (pid \(daemon.pid)) log:\n\(tail)"))
        }
    }

    /// Runs `body` with a fresh fixture and always shuts it down, even when `body` throws.
    static func with(
        _ name: String, placement: [Rule] = demoPlacement, _ body: (ClusterFixture) async throws -> Void
    ) async throws {
        let fixture = try ClusterFixture(name, placement: placement)
        do {
            try await body(fixture)
        } catch {
            fixture.recordLogs()
            await fixture.shutDown()
            throw error
        }
        await fixture.shutDown()
    }
}

/// A coordinator JSON line describing a rendering of the email browser.
struct BrowserFrame: Decodable {
    struct Inbox: Decodable {
        var renderedBy: String
        var messageIDs: [Int]
    }
    struct Message: Decodable {
        var renderedBy: String
        var messageID: Int?
    }
    var event: String
    var inbox: Inbox
    var message: Message

    /// The frame on `line`, if it is a rendering line.
    static func parse(_ line: String) -> BrowserFrame? {
        guard let frame = try? JSONDecoder().decode(BrowserFrame.self, from: Data(line.utf8)), frame.event == "rendering" else {
            return nil
        }
        return frame
    }

    /// A predicate for lines showing the inbox rendered by `inbox` and the message by `message`.
    static func rendered(inbox: String, message: String) -> @Sendable (String) -> Bool {
        { line in
            guard let frame = parse(line) else { return false }
            return frame.inbox.renderedBy == inbox && frame.message.renderedBy == message && !frame.inbox.messageIDs.isEmpty
        }
    }
}

/// A coordinator JSON line reporting a remote child's status.
struct StatusLine: Decodable {
    var event: String
    var path: String
    var status: String
    var detail: String

    /// A predicate for status lines of the child whose path contains `pathPart`, in `status`.
    static func matching(_ pathPart: String, _ status: String) -> @Sendable (String) -> Bool {
        { line in
            guard let parsed = try? JSONDecoder().decode(StatusLine.self, from: Data(line.utf8)) else { return false }
            return parsed.event == "status" && parsed.path.contains(pathPart) && parsed.status == status
        }
    }
}
