import Foundation
import Synchronization

/// The daemons one test started, stopped together when the test ends, passed or failed.
///
/// A test starts every process through its group, so `shutDown()` can stop them all in the
/// reverse order of their start (workers before their coordinator: SIGTERM, then SIGKILL for one
/// that does not exit within the safety timeout) and tell the test which, if any, survived.
public final class DaemonGroup: Sendable {
    private let daemons = Mutex<[DaemonProcess]>([])

    /// An empty group.
    public init() {}

    /// Starts a daemon (see `DaemonProcess.init`) as a member of the group.
    @discardableResult
    public func start(
        _ executable: String, _ arguments: [String], label: String, environment: [String: String] = [:], standardInput: Bool = false
    ) throws -> DaemonProcess {
        let daemon = try DaemonProcess(executable, arguments, label: label, environment: environment, standardInput: standardInput)
        daemons.withLock { $0.append(daemon) }
        return daemon
    }

    /// Every daemon started, in order.
    public var members: [DaemonProcess] { daemons.withLock { $0 } }

    /// The latest daemon started under `label`.
    public func daemon(labelled label: String) -> DaemonProcess? {
        members.last { $0.label == label }
    }

    /// Everything every daemon wrote so far, standard output and standard error.
    public var allOutput: String {
        members.map { ($0.stdout.lines + $0.stderr.lines).joined(separator: "\n") }.joined(separator: "\n")
    }

    /// The last `count` lines of each daemon's standard error, labelled (for a failure message).
    public func logTails(_ count: Int = 30) -> [String] {
        members.map { "\($0.label) (pid \($0.pid)) log:\n" + $0.stderr.lines.suffix(count).joined(separator: "\n") }
    }

    /// Stops every daemon still running, the latest started first: SIGTERM, then SIGKILL if it
    /// does not exit in time. Returns the labels of any still running afterwards (none, unless
    /// a process cannot be reaped).
    @discardableResult
    public func shutDown() async -> [String] {
        let started = members
        for daemon in started.reversed() where daemon.isRunning {
            kill(daemon.pid, SIGTERM)
            if (try? await daemon.waitForExit()) == nil { daemon.forceKill() }
        }
        return started.filter(\.isRunning).map { "\($0.label) (pid \($0.pid))" }
    }
}
