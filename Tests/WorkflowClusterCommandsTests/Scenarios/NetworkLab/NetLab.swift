import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowClusterTesting

/// One instance of `scripts/netlab.sh`'s network lab: test hosts in network namespaces joined by
/// a bridge, with cuts, loss and latency on demand.
///
/// Each instance has a name of its own (the test process's pid and a counter), so two test
/// processes or two suites never touch each other's namespaces. `down()` removes the lab and
/// every process running in it; `NetLab.with` calls it whether the body passed or threw, and a
/// new lab first removes labs left by test processes that died before their cleanup ran.
final class NetLab: Sendable {
    /// The lab's name: the prefix of every namespace it made.
    let name: String
    /// Each host's own address, by host name.
    let addresses: [String: String]

    /// The repository's `scripts/netlab.sh` (found from this file).
    static let script = (repositoryFolder(holding: "scripts/netlab.sh", from: #filePath)?.path ?? ".") + "/scripts/netlab.sh"

    /// Whether a lab can be made on this machine, and if not why (`netlab.sh check`, run once).
    static let availability: (available: Bool, reason: String) = {
        guard let (status, text) = try? ChildProcess.run("/usr/bin/env", ["bash", script, "check"]) else {
            return (false, "cannot run \(script)")
        }
        return (status == 0, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }()

    /// The line a skipped lab suite shows.
    static var skipReason: Comment {
        Comment(rawValue: "network lab unavailable (scripts/netlab.sh check: \(availability.reason)); needs root, iproute2 and nftables")
    }

    private static let counter = Atomic<Int>(0)

    /// Makes a lab with `hosts` (`netlab.sh up`).
    init(hosts: [String]) async throws {
        await Self.removeLabsOfDeadProcesses()
        name = "wfl\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        let output = try await Self.run(["up", name] + hosts)
        var addresses: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { addresses[String(parts[0])] = String(parts[1]) }
        }
        self.addresses = addresses
        guard Set(addresses.keys) == Set(hosts) else {
            _ = try? await Self.run(["down", name])
            throw WaitFailure(description: "netlab up \(name) printed \(output)")
        }
    }

    /// `host`'s own address.
    func address(_ host: String) -> String { addresses[host] ?? "?" }

    /// Drops `host`'s traffic: `both` ways, only what it sends (`out`) or only what it receives (`in`).
    func cut(_ host: String, _ direction: String = "both") async throws { _ = try await Self.run(["cut", name, host, direction]) }

    /// Drops `percent` % of `host`'s frames at random, each way.
    func loss(_ host: String, percent: Int) async throws { _ = try await Self.run(["loss", name, host, String(percent)]) }

    /// How many frames `host`'s cuts and loss have dropped since they were made.
    func dropped(_ host: String) async throws -> Int {
        let output = try await Self.run(["dropped", name, host]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let count = Int(output) else { throw WaitFailure(description: "netlab dropped printed \(output)") }
        return count
    }

    /// Removes `host`'s cuts and loss; returns how many frames they had dropped.
    @discardableResult
    func heal(_ host: String) async throws -> Int {
        let output = try await Self.run(["heal", name, host]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let count = Int(output) else { throw WaitFailure(description: "netlab heal printed \(output)") }
        return count
    }

    /// Gives `host` the extra address `address`, taking it from the host that had it.
    func move(_ address: String, to host: String) async throws { _ = try await Self.run(["move", name, address, host]) }

    /// The executable and arguments that run `command` on `host` (the process keeps its pid).
    func onHost(_ host: String, _ command: [String]) -> (String, [String]) {
        ("/usr/bin/env", ["bash", Self.script, "exec", name, host] + command)
    }

    /// The executable and arguments of a delay proxy on `host`: tcp `port` forwarded to `target`
    /// with each direction delayed by `mean` ± `jitter` milliseconds.
    func delayProxy(on host: String, port: Int, target: String, meanMilliseconds mean: Int, jitterMilliseconds jitter: Int) -> (String, [String]) {
        ("/usr/bin/env", ["bash", Self.script, "delay", name, host, String(port), target, String(mean), String(jitter)])
    }

    /// The executable and arguments of a way in for this process to `target` (an address and
    /// port as `host` sees them, e.g. its loopback): it prints `listening PORT`, a port on
    /// 127.0.0.1 here, and forwards each connection there (`netlab.sh publish`). The lab's cuts do
    /// not touch it: it stands for clients outside the lab's network.
    func publish(_ host: String, target: String) -> (String, [String]) {
        ("/usr/bin/env", ["bash", Self.script, "publish", name, host, target])
    }

    /// Removes the lab: its processes, namespaces, links and rules.
    func down() async {
        do {
            _ = try await Self.run(["down", name])
        } catch {
            Issue.record("netlab down \(name) failed: \(error)")
        }
    }

    /// Runs `body` in a new lab and always removes the lab afterwards.
    static func with<T>(hosts: [String], _ body: (NetLab) async throws -> T) async throws -> T {
        let lab = try await NetLab(hosts: hosts)
        do {
            let result = try await body(lab)
            await lab.down()
            return result
        } catch {
            await lab.down()
            throw error
        }
    }

    /// Runs `netlab.sh` with `arguments`; returns its standard output, throws on failure.
    @discardableResult
    static func run(_ arguments: [String]) async throws -> String {
        let process = try DaemonProcess("/usr/bin/env", ["bash", script] + arguments, label: "netlab.sh \(arguments.prefix(2).joined(separator: " "))")
        let status = try await process.waitForExit()
        guard status == 0 else {
            throw WaitFailure(
                description: "netlab.sh \(arguments.joined(separator: " ")) exited \(status): \(process.stderr.lines.joined(separator: "\n"))")
        }
        return process.stdout.lines.joined(separator: "\n")
    }

    /// Labs are named `wfl<pid>-<n>`: one whose test process is gone was left by a run that was
    /// killed before its cleanup; remove it.
    private static func removeLabsOfDeadProcesses() async {
        guard let listing = try? await run(["list"]) else { return }
        for lab in listing.split(separator: "\n").map(String.init) {
            guard lab.hasPrefix("wfl"), let dash = lab.firstIndex(of: "-"), let pid = Int32(lab[lab.index(lab.startIndex, offsetBy: 3)..<dash]),
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? await run(["down", lab])
        }
    }
}
