import Foundation
import Testing
import WorkflowClusterTesting

/// A test's order-fulfilment cluster: the shipped configuration on a private ipc endpoint, and
/// every daemon started through it, so `shutDown()` stops them all (SIGTERM, then SIGKILL) and
/// checks none is left, whether the test passed or failed.
final class OrdersCluster: Sendable {
    /// `Config/orders-cluster.json` of this package.
    static let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/orders-cluster.json").path

    let endpoint = "ipc:///tmp/orders-test-\(getpid())-\(UUID().uuidString.prefix(8)).ipc"
    /// A private directory for files a test writes (snapshots); removed at shutdown.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orders-test-\(getpid())-\(UUID().uuidString.prefix(8))")
    /// The daemons the test started.
    let daemons = DaemonGroup()

    /// Starts the coordinator (JSON renderings, events from standard input) and waits until it
    /// listens.
    func startCoordinator(_ extra: [String] = []) async throws -> DaemonProcess {
        let coordinator = try daemons.start(
            "orders-coordinator",
            ["--config", Self.config, "--endpoint", endpoint, "--print-renderings", "json", "--events-from-stdin"] + extra,
            label: "coordinator", standardInput: true)
        try await coordinator.stdout.first("the coordinator to listen") { $0.contains(#""event":"listening""#) }
        return coordinator
    }

    /// Starts the worker `name` and waits until the coordinator welcomed it.
    @discardableResult
    func startWorker(_ name: String) async throws -> DaemonProcess {
        let worker = try daemons.start("orders-worker", ["--config", Self.config, "--endpoint", endpoint, "--name", name], label: name)
        try await worker.stderr.first("\(name) to be welcomed") { $0.contains("welcomed by the parent") }
        return worker
    }

    /// Stops every daemon still running (workers first), SIGKILLing one that does not exit.
    func shutDown() async {
        for survivor in await daemons.shutDown() { Issue.record("\(survivor) is still running") }
        try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a fresh cluster and always shuts it down; on failure attaches the logs.
    static func with(_ body: (OrdersCluster) async throws -> Void) async throws {
        let cluster = OrdersCluster()
        do {
            try await body(cluster)
        } catch {
            for daemon in cluster.daemons.members {
                let tail = (daemon.stdout.lines.suffix(5) + daemon.stderr.lines.suffix(20)).joined(separator: "\n")
                Issue.record(Comment(rawValue: "\(daemon.label) output:\n\(tail)"))
            }
            await cluster.shutDown()
            throw error
        }
        await cluster.shutDown()
    }
}
