import WorkflowClusterTesting
import Foundation
import Testing

/// `scripts/cluster.sh`, driving the real daemons built next to the test bundle.
@Suite("Cluster script")
struct ClusterScriptTests {
    /// The repository's root (where `scripts/cluster.sh` is).
    static let repository = repositoryFolder(holding: "scripts/cluster.sh", from: #filePath) ?? URL(fileURLWithPath: "/")

    /// Runs `scripts/cluster.sh COMMAND CONFIG` and returns its exit status and standard output.
    static func cluster(_ command: String, _ fixture: BrowserCluster, runDirectory: URL) async throws -> (Int32, String) {
        let script = try fixture.start(
            "/usr/bin/env",
            ["bash", repository.appendingPathComponent("scripts/cluster.sh").path, command, fixture.configPath],
            label: "cluster.sh \(command)",
            environment: [
                "RUN_DIR": runDirectory.path, "SKIP_BUILD": "1", "READY_TIMEOUT": "60",
                "BIN_DIR": DaemonProcess.executableURL("workflow-coordinator").deletingLastPathComponent().path,
            ])
        let status = try await script.waitForExit()
        return (status, script.stdout.lines.joined(separator: "\n"))
    }

    /// Whether `pid` is a live process (a zombie awaiting a reaper counts as gone).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    @Test("up waits for every worker, status shows the children running, down leaves no daemon")
    func upStatusDown() async throws {
        try await BrowserCluster.with("script") { cluster in
            let runDirectory = cluster.directory.appendingPathComponent("run")
            var pids: [Int32] = []
            do {
                let (upStatus, up) = try await Self.cluster("up", cluster, runDirectory: runDirectory)
                #expect(upStatus == 0, "\(up)")
                #expect(up.contains("cluster up: coordinator + 2 workers"))
                pids = try FileManager.default.contentsOfDirectory(atPath: runDirectory.path).filter { $0.hasSuffix(".pid") }
                    .compactMap { Int32((try? String(contentsOfFile: runDirectory.appendingPathComponent($0).path, encoding: .utf8))?
                        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") }
                #expect(pids.count == 3)

                // The children start once both workers joined; wait on the coordinator's log line.
                let log = runDirectory.appendingPathComponent("coordinator.log").path
                try await withSafetyTimeout("both children running in the coordinator log") {
                    while true {
                        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                        if text.contains("child status: running on worker-1") && text.contains("child status: running on worker-2") { return }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                let (statusStatus, status) = try await Self.cluster("status", cluster, runDirectory: runDirectory)
                #expect(statusStatus == 0)
                #expect(status.contains("coordinator: running"))
                #expect(status.contains("running on worker-1") && status.contains("running on worker-2"), "\(status)")
                #expect(status.contains("latest screen"), "\(status)")
                #expect(status.contains("gateway: http://127.0.0.1:"), "status reads the gateway's /api/tree: \(status)")

                // A listed worker that is not running makes status fail (and say which).
                let worker2 = try String(contentsOfFile: runDirectory.appendingPathComponent("worker-2.pid").path, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                kill(try #require(Int32(worker2)), SIGKILL)
                let (failedStatus, failed) = try await Self.cluster("status", cluster, runDirectory: runDirectory)
                #expect(failedStatus != 0, "\(failed)")
                #expect(failed.contains("worker-2: NOT running"), "\(failed)")
            } catch {
                _ = try? await Self.cluster("down", cluster, runDirectory: runDirectory)
                throw error
            }
            let (downStatus, down) = try await Self.cluster("down", cluster, runDirectory: runDirectory)
            #expect(downStatus == 0)
            #expect(down.contains("stopped coordinator"))
            for pid in pids { #expect(!Self.isAlive(pid), "daemon pid \(pid) survived cluster.sh down") }
        }
    }
}
