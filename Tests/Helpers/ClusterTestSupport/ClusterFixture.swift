import Foundation
import Testing
import WorkflowClusterTesting

/// A test's cluster: a configuration file on a unique ipc endpoint and the daemons it started.
///
/// Every daemon is started through the fixture's `DaemonGroup`, so `shutDown()` can stop them all
/// (SIGTERM, then SIGKILL if one does not exit) and check that none is left running, whether the
/// test passed or failed.
package final class ClusterFixture: Sendable {
    package let directory: URL
    package let configPath: String
    package let endpoint: String
    /// The daemons the test started.
    package let daemons = DaemonGroup()

    /// A placement rule as the configuration file spells it.
    package typealias Rule = [String: String]

    /// The list pane on worker-1, the detail pane on worker-2: the tests' usual placement.
    package static let demoPlacement: [Rule] = [
        ["match": "RemoteTestSupport.ListPaneWorkflow", "worker": "worker-1"],
        ["match": "RemoteTestSupport.DetailPaneWorkflow", "worker": "worker-2"],
    ]

    /// A CURVE `security` section for keys `keygen` wrote into `keys` (relative to the config).
    package static func curveSecurity(keys: String = "keys") -> [String: String] {
        [
            "mode": "curve", "server_public_key": "\(keys)/coordinator.pub", "server_secret_key": "\(keys)/coordinator.key",
            "allowed_client_keys": "\(keys)/allowed-workers", "client_keys_dir": "\(keys)/workers",
        ]
    }

    package init(_ name: String, placement: [Rule] = demoPlacement) throws {
        let unique = "\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-cluster-\(unique)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent("cluster.json").path
        endpoint = "ipc://" + directory.appendingPathComponent("endpoint").path
        try writeConfig(placement: placement)
    }

    /// Where tests have `keygen` write CURVE keys (what `curveSecurity()` points at).
    package var keysDirectory: String { directory.appendingPathComponent("keys").path }

    /// The two workers of the usual placement, as the configuration file lists them.
    package static let demoWorkers: [Rule] = [["name": "worker-1", "pool": "lists"], ["name": "worker-2", "pool": "details"]]

    /// Rewrites the configuration file with `placement`, `security` (`nil`: no `security`
    /// section), `workers`, `endpoint` (default: the fixture's private ipc endpoint), `heartbeat`
    /// (default 100 ms × 5) and `drain` (default: no section).
    package func writeConfig(
        placement: [Rule], security: [String: String]? = ["mode": "plaintext"], workers: [Rule] = demoWorkers,
        endpoint: String? = nil, heartbeat: [String: Int] = ["interval_ms": 100, "liveness": 5], drain: [String: Int]? = nil
    ) throws {
        var document: [String: Any] = [
            "coordinator": ["endpoint": endpoint ?? self.endpoint, "root": "list-detail"],
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

    /// Starts the coordinator printing JSON lines (renderings and statuses), with `environment`
    /// added to the test's own, and waits until it listens.
    @discardableResult
    package func startCoordinator(_ extra: [String] = [], environment: [String: String] = [:]) async throws -> DaemonProcess {
        let coordinator = try start(
            "test-coordinator", ["--config", configPath, "--print-renderings", "json"] + extra, label: "coordinator", environment: environment)
        do {
            try await coordinator.stdout.first("the coordinator to listen") { $0.contains(#""event":"listening""#) }
        } catch {
            throw WaitFailure(description: "\(error); its log:\n\(coordinator.stderr.lines.joined(separator: "\n"))")
        }
        return coordinator
    }

    /// Starts a worker named `name` (with `extra` arguments and `environment` added to the test's
    /// own) and waits until the coordinator welcomed it.
    @discardableResult
    package func startWorker(_ name: String, _ extra: [String] = [], environment: [String: String] = [:]) async throws -> DaemonProcess {
        let worker = try start("test-worker", ["--config", configPath, "--name", name] + extra, label: name, environment: environment)
        do {
            try await worker.stderr.first("\(name) to be welcomed") { $0.contains("welcomed by the parent") }
        } catch {
            throw WaitFailure(description: "\(error); its log:\n\(worker.stderr.lines.joined(separator: "\n"))")
        }
        return worker
    }

    /// Starts any daemon through the fixture (so it is cleaned up); with `standardInput`, the
    /// daemon reads what `DaemonProcess.send(line:)` writes.
    package func start(
        _ executable: String, _ arguments: [String], label: String, environment: [String: String] = [:], standardInput: Bool = false
    ) throws -> DaemonProcess {
        try daemons.start(executable, arguments, label: label, environment: environment, standardInput: standardInput)
    }

    /// Stops every daemon still running (workers first, SIGTERM then SIGKILL after a bound),
    /// removes the files, and records a test issue if any daemon survived.
    package func shutDown() async {
        for survivor in await daemons.shutDown() {
            Issue.record("\(survivor) is still running")
        }
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
    }

    /// The latest daemon started under `label`.
    package func daemon(labelled label: String) -> DaemonProcess? {
        daemons.daemon(labelled: label)
    }

    /// Everything every daemon wrote so far, standard output and standard error.
    package var allOutput: String {
        daemons.allOutput
    }

    /// Attaches the end of every daemon's log to the test's issues (for diagnosing a failure).
    package func recordLogs() {
        for tail in daemons.logTails() { Issue.record(Comment(rawValue: tail)) }
    }

    /// Runs `body` with a fresh fixture and always shuts it down, even when `body` throws.
    package static func with(
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

/// A coordinator JSON line showing a rendering of the test root `list-detail`.
package struct ListDetailFrame: Decodable {
    package struct List: Decodable {
        package var renderedBy: String
        package var ids: [Int]
    }
    package struct Detail: Decodable, Sendable {
        package var renderedBy: String
        package var id: Int?
    }
    package struct Rendering: Decodable {
        package var list: List
        package var detail: Detail
    }
    package var event: String
    package var rendering: Rendering
    package var list: List { rendering.list }
    package var detail: Detail { rendering.detail }

    /// The frame on `line`, if it is a rendering line.
    package static func parse(_ line: String) -> ListDetailFrame? {
        guard let frame = try? JSONDecoder().decode(ListDetailFrame.self, from: Data(line.utf8)), frame.event == "rendering" else {
            return nil
        }
        return frame
    }

    /// A predicate for lines showing the list rendered by `list` and the detail by `detail`.
    package static func rendered(list: String, detail: String) -> @Sendable (String) -> Bool {
        { line in
            guard let frame = parse(line) else { return false }
            return frame.list.renderedBy == list && frame.detail.renderedBy == detail && !frame.list.ids.isEmpty
        }
    }
}

/// A coordinator JSON line reporting a remote child's status.
package struct StatusLine: Decodable {
    package var event: String
    package var path: String
    package var status: String
    package var detail: String

    /// A predicate for status lines of the child whose path contains `pathPart`, in `status`.
    package static func matching(_ pathPart: String, _ status: String) -> @Sendable (String) -> Bool {
        { line in
            guard let parsed = try? JSONDecoder().decode(StatusLine.self, from: Data(line.utf8)) else { return false }
            return parsed.event == "status" && parsed.path.contains(pathPart) && parsed.status == status
        }
    }
}
