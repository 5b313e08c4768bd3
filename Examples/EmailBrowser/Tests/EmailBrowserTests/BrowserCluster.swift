import Foundation
import Testing
import WorkflowClusterTesting

/// A test's email-browser cluster: a configuration file on a private ipc endpoint (the browser's
/// usual placement: the inbox on worker-1, the message on worker-2; the gateway on a free
/// loopback port), and every daemon started through its `DaemonGroup`, so `shutDown()` stops
/// them all and checks none is left, whether the test passed or failed.
final class BrowserCluster: Sendable {
    let directory: URL
    let configPath: String
    let endpoint: String
    let daemons = DaemonGroup()

    /// The endpoints of the coordinators: one, or two (a leader and a standby) with `sharedStore`,
    /// or two serving at once with `spread`.
    let endpoints: [String]

    /// Sessions spread over coordinators sharing a PostgreSQL store (`sessions.spread_lease_ms`),
    /// their pages allowed to call each other's gateways (`gateway.allowed_origins`).
    struct Spread {
        var store: String
        var allowedOrigins: [String]
        /// Twice the recommended lease, so that a coordinator starved of CPU by a loaded machine
        /// keeps its sessions until the test's fault.
        var leaseMilliseconds = 3_000
    }

    /// A cluster named `name`; with `sharedStore` (a PostgreSQL URL), a cluster for a leader and
    /// a standby coordinator sharing that store under a lease, each worker configured with both
    /// endpoints; with `spread`, one for coordinators spreading sessions (each with workers of
    /// its own, started with `startWorker(_:coordinator:)`).
    init(_ name: String, sharedStore: String? = nil, spread: Spread? = nil) throws {
        let unique = "\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("email-browser-\(unique)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent("cluster.json").path
        endpoint = "ipc://" + directory.appendingPathComponent("endpoint").path
        endpoints = sharedStore == nil && spread == nil ? [endpoint] : [endpoint, endpoint + "-b"]
        var document: [String: Any] = [
            "coordinator": ["endpoints": endpoints, "root": "email-browser"],
            "workers": [["name": "worker-1", "pool": "inbox"], ["name": "worker-2", "pool": "messages"]],
            "heartbeat": ["interval_ms": 100, "liveness": 5],
            "request": ["deadline_ms": 10_000],
            "log": ["level": "info", "format": "text"],
            "placement": [
                ["match": "EmailBrowser.InboxWorkflow", "worker": "worker-1"],
                ["match": "EmailBrowser.MessageWorkflow", "worker": "worker-2"],
            ],
            "security": ["mode": "plaintext"],
            "gateway": ["listen": "127.0.0.1:0"],
        ]
        if let sharedStore {
            // Twice the recommended lease, so that a leader starved of CPU by a loaded machine
            // does not step down by itself before the test's fault.
            document["store"] = ["kind": "postgres", "url": sharedStore, "lease_ms": 3_000]
        }
        if let spread {
            // One endpoint, which each daemon's --endpoint replaces: a worker stays with its own
            // coordinator, never joining another when its own is gone.
            document["coordinator"] = ["endpoint": endpoint, "root": "email-browser"]
            document["store"] = ["kind": "postgres", "url": spread.store]
            document["sessions"] = ["enabled": true, "spread_lease_ms": spread.leaseMilliseconds]
            document["gateway"] = ["listen": "127.0.0.1:0", "allowed_origins": spread.allowedOrigins]
        }
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts the coordinator printing JSON lines and waits until it listens.
    @discardableResult
    func startCoordinator(_ extra: [String] = []) async throws -> DaemonProcess {
        let coordinator = try start("workflow-coordinator", ["--config", configPath, "--print-renderings", "json"] + extra, label: "coordinator")
        try await coordinator.stdout.first("the coordinator to listen") { $0.contains(#""event":"listening""#) }
        return coordinator
    }

    /// Starts coordinator `index` of a cluster with a shared store, binding `endpoints[index]`
    /// when it leads and its gateway on `gatewayPort` (the same as standby and as leader); waits
    /// until it prints its gateway, as a leader or as a standby (`role`).
    @discardableResult
    func startCoordinator(_ index: Int, gatewayPort: Int, role: String, _ extra: [String] = []) async throws -> DaemonProcess {
        let coordinator = try start(
            "workflow-coordinator",
            ["--config", configPath, "--print-renderings", "json", "--endpoint", endpoints[index], "--gateway-listen", "127.0.0.1:\(gatewayPort)"]
                + extra,
            label: "coordinator-\(index)")
        try await coordinator.stdout.first("coordinator-\(index) to serve as \(role)") { line in
            line.contains(#""event":"gateway""#) && (role == "standby") == line.contains(#""role":"standby""#)
        }
        return coordinator
    }

    /// Starts the worker `name` and waits until the coordinator welcomed it.
    @discardableResult
    func startWorker(_ name: String) async throws -> DaemonProcess {
        let worker = try start("workflow-worker", ["--config", configPath, "--name", name], label: name)
        try await worker.stderr.first("\(name) to be welcomed") { $0.contains("welcomed by the parent") }
        return worker
    }

    /// Starts the worker `name` of coordinator `index` (spread sessions: each coordinator has
    /// workers of its own, of the same names) and waits until it was welcomed.
    @discardableResult
    func startWorker(_ name: String, coordinator index: Int) async throws -> DaemonProcess {
        let worker = try start("workflow-worker", ["--config", configPath, "--name", name, "--endpoint", endpoints[index]], label: "\(name)-\(index)")
        try await worker.stderr.first("\(name) of coordinator-\(index) to be welcomed") { $0.contains("welcomed by the parent") }
        return worker
    }

    /// Starts any process as a member of the cluster (so it is stopped with it).
    func start(_ executable: String, _ arguments: [String], label: String, environment: [String: String] = [:]) throws -> DaemonProcess {
        try daemons.start(executable, arguments, label: label, environment: environment)
    }

    /// The latest daemon started under `label`.
    func daemon(labelled label: String) -> DaemonProcess? { daemons.daemon(labelled: label) }

    /// The gateway's base URL, as the coordinator printed it (`{"event":"gateway","url":…}`).
    static func gatewayURL(of coordinator: DaemonProcess) async throws -> String {
        struct Line: Decodable {
            var url: String?
        }
        let line = try await coordinator.stdout.first("the gateway to listen") { $0.contains(#""event":"gateway""#) }
        guard let url = try JSONDecoder().decode(Line.self, from: Data(line.utf8)).url else {
            throw WaitFailure(description: "no url in \(line)")
        }
        return url
    }

    /// Runs `body` with a fresh cluster and always shuts it down, even when `body` throws.
    static func with(_ name: String, sharedStore: String? = nil, spread: Spread? = nil, _ body: (BrowserCluster) async throws -> Void) async throws {
        let cluster = try BrowserCluster(name, sharedStore: sharedStore, spread: spread)
        do {
            try await body(cluster)
        } catch {
            for tail in cluster.daemons.logTails() { Issue.record(Comment(rawValue: tail)) }
            await cluster.shutDown()
            throw error
        }
        await cluster.shutDown()
    }

    private func shutDown() async {
        for survivor in await daemons.shutDown() { Issue.record("\(survivor) is still running") }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A coordinator JSON line describing a rendering of the email browser (`EmailBrowserFrames`).
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

    /// A predicate for lines showing the inbox rendered by `inbox` and the message by `message`.
    static func rendered(inbox: String, message: String) -> @Sendable (String) -> Bool {
        { line in
            guard let frame = try? JSONDecoder().decode(BrowserFrame.self, from: Data(line.utf8)), frame.event == "rendering" else { return false }
            return frame.inbox.renderedBy == inbox && frame.message.renderedBy == message && !frame.inbox.messageIDs.isEmpty
        }
    }
}
