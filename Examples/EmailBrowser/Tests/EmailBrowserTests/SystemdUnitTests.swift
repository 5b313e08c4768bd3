import Foundation
import Testing
import WorkflowClusterTesting

/// The systemd units in `deploy/systemd/`: valid for systemd, hardened, and starting the daemons
/// with flags they accept.
@Suite("systemd units")
struct SystemdUnitTests {
    static let unitDirectory = ClusterScriptTests.repository.appendingPathComponent("deploy/systemd")
    static let units = ["workflow-coordinator.service", "workflow-worker@.service"]
    static let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A unit's text with the daemons' install path replaced by the build directory, so that
    /// `systemd-analyze verify` (which checks that `ExecStart` is executable) finds them.
    static func unitForThisBuild(_ name: String) throws -> String {
        let text = try String(contentsOf: unitDirectory.appendingPathComponent(name), encoding: .utf8)
        let binaries = DaemonProcess.executableURL("workflow-coordinator").deletingLastPathComponent().path
        return text.replacingOccurrences(of: "/usr/local/bin/", with: binaries + "/")
    }

    /// Runs `executable arguments` and returns its exit status and everything it printed.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(executable, arguments)
    }

    /// The value of every `Key=` line of a unit, in order.
    static func values(of key: String, in unit: String) -> [String] {
        unit.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    @Test("systemd-analyze verify accepts both units with no complaint", .enabled(if: systemdAnalyze != nil, "systemd-analyze is not installed"))
    func verify() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = directory.appendingPathComponent("workflow-coordinator.service")
        // A template is verified through an instance, as systemd would start it.
        let worker = directory.appendingPathComponent("workflow-worker@worker-1.service")
        try Self.unitForThisBuild("workflow-coordinator.service").write(to: coordinator, atomically: true, encoding: .utf8)
        try Self.unitForThisBuild("workflow-worker@.service").write(to: worker, atomically: true, encoding: .utf8)
        let result = try Self.run(Self.systemdAnalyze!, ["verify", coordinator.path, worker.path])
        #expect(result.status == 0, "\(result.output)")
        // Unknown keys and bad values are warnings with exit status 0: there must be none.
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(result.output)")
    }

    @Test("each unit runs as the dedicated user, read-only system, no privileges, config errors not restarted", arguments: units)
    func hardened(_ name: String) throws {
        let unit = try String(contentsOf: Self.unitDirectory.appendingPathComponent(name), encoding: .utf8)
        let expected: [String: String] = [
            "User": "workflow", "Group": "workflow", "ProtectSystem": "strict", "ProtectHome": "yes",
            "NoNewPrivileges": "yes", "PrivateTmp": "yes", "CapabilityBoundingSet": "", "UMask": "0077",
            "RestartPreventExitStatus": "78",
        ]
        for (key, value) in expected {
            #expect(Self.values(of: key, in: unit) == [value], "\(name): \(key)")
        }
        let sysusers = try String(contentsOf: Self.unitDirectory.appendingPathComponent("workflow.sysusers"), encoding: .utf8)
        #expect(sysusers.split(separator: "\n").contains { $0.hasPrefix("u workflow ") })
    }

    @Test("the worker unit's command line is accepted: a missing config is a configuration error (78), not a usage error")
    func workerCommandLine() throws {
        let unit = try Self.unitForThisBuild("workflow-worker@.service")
        let execStart = try #require(Self.values(of: "ExecStart", in: unit).first)
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString)/cluster.json").path
        var words = execStart.split(separator: " ").map(String.init)
        words = words.map { $0 == "/etc/workflow/cluster.json" ? missing : $0.replacingOccurrences(of: "%i", with: "worker-1") }
        let result = try Self.run(words[0], Array(words.dropFirst()))
        #expect(result.status == 78, "\(result.output)")
    }

    @Test("the coordinator unit's command line is accepted, with and without a snapshot to restore")
    func coordinatorCommandLine() throws {
        let unit = try Self.unitForThisBuild("workflow-coordinator.service")
        let execStart = try #require(Self.values(of: "ExecStart", in: unit).first)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let snapshot = directory.appendingPathComponent("coordinator.snapshot").path
        let command = execStart
            .replacingOccurrences(of: "/etc/workflow/cluster.json", with: directory.appendingPathComponent("cluster.json").path)
            .replacingOccurrences(of: "/var/lib/workflow/coordinator.snapshot", with: snapshot)
        #expect(command.hasPrefix("/bin/sh -c '") && command.hasSuffix("'"))
        let script = String(command.dropFirst("/bin/sh -c '".count).dropLast())
        let coordinator = DaemonProcess.executableURL("workflow-coordinator").path
        let echoing = script.replacingOccurrences(of: "exec " + coordinator, with: "exec /bin/echo")
        #expect(echoing != script)
        // No snapshot yet: starts fresh.
        let fresh = try Self.run("/bin/sh", ["-c", echoing])
        #expect(!fresh.output.contains("--restore"), "\(fresh.output)")
        // The real daemon accepts that command line: the missing config is the error (78).
        let real = try Self.run("/bin/sh", ["-c", script])
        #expect(real.status == 78, "\(real.output)")
        // A snapshot present: it is passed with --restore, and the daemon accepts that too.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: snapshot))
        let restoring = try Self.run("/bin/sh", ["-c", echoing])
        #expect(restoring.output.contains("--restore \(snapshot)"), "\(restoring.output)")
        let realRestoring = try Self.run("/bin/sh", ["-c", script])
        #expect(realRestoring.status == 78, "\(realRestoring.output)")
    }
}
