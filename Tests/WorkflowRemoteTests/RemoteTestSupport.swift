import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowRemote
import WorkflowClusterTesting
import ZeroMQ

/// Polls `condition` (a counter kept by another process's runtime, which has no event stream)
/// until it holds. The condition is read once more after the deadline has passed before the wait
/// fails: on a machine that stalled this task past the deadline, what happened meanwhile counts.
func eventually(_ what: String, _ condition: @escaping @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + safetyTimeout
    while await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitFailure(description: "\(what): timed out after \(safetyTimeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

extension ZMQSocket {
    /// The next message, or `nil` if none arrives within `limit`, waited for without holding a
    /// thread: the concurrency pool has one thread per core (two on the CI machine), and a test
    /// blocked in `zmq_recv` holds one for as long as it waits, so two such tests stall every
    /// other test of the parallel run, and with them whatever the waits themselves depend on.
    /// Read once more after the deadline, like `eventually`.
    func nextMultipart(within limit: Duration = safetyTimeout) async throws -> [[UInt8]]? {
        try await nextMultipart(before: ContinuousClock.now + limit)
    }

    /// The next message, or `nil` if none arrives before `deadline` (see `nextMultipart(within:)`).
    func nextMultipart(before deadline: ContinuousClock.Instant) async throws -> [[UInt8]]? {
        while true {
            if let frames = try receiveMultipart(.dontWait) { return frames }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// Waits for a rendering of `host` that satisfies `predicate`.
@discardableResult
func rendering<W>(of host: WorkflowHost<W>, _ what: String = "rendering", where predicate: @escaping @Sendable (W.Rendering) -> Bool)
    async throws -> W.Rendering
{
    try await withSafetyTimeout("waiting for \(what)") {
        for await rendering in host.renderings where predicate(rendering) { return rendering }
        throw WaitFailure(description: "renderings finished before \(what)")
    }
}

/// Waits until the runtime reports a status for `path`-suffix that satisfies `predicate`.
func status(of runtime: RemoteRuntime, pathSuffix: String, where predicate: @escaping @Sendable (RemoteChildStatus) -> Bool)
    async throws -> RemoteChildStatus
{
    try await withSafetyTimeout("waiting for the status of \(pathSuffix)") {
        let changes = runtime.statusChanges
        if let current = runtime.statuses.first(where: { $0.key.hasSuffix(pathSuffix) })?.value, predicate(current) {
            return current
        }
        for await change in changes where change.path.hasSuffix(pathSuffix) && predicate(change.status) {
            return change.status
        }
        throw WaitFailure(description: "status stream ended")
    }
}

/// A unique ipc endpoint for one test (tests run in parallel in one process).
func uniqueEndpoint(_ name: String) -> String {
    "ipc:///tmp/wf-test-\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
}

/// A parent runtime listening on a fresh endpoint. Its liveness window (100 ms × 20) is generous:
/// on a loaded machine a worker thread may not run for a second, and a test that is not about
/// silence must not take that for a dead worker (tests about silence set their own windows).
func makeParent(_ name: String, requestTimeout: Duration = .seconds(10), liveness: Int = 20) throws -> RemoteRuntime {
    var configuration = RemoteRuntimeConfiguration(name: name)
    configuration.listenEndpoint = uniqueEndpoint(name)
    configuration.requestTimeout = requestTimeout
    configuration.heartbeatInterval = .milliseconds(100)
    configuration.heartbeatLiveness = liveness
    return try RemoteRuntime(configuration: configuration)
}

/// An in-process worker runtime of `pool` connected to `parent`; a parent silent for
/// `heartbeat` × `liveness` makes it reconnect on a fresh socket.
func makeWorker(
    _ name: String, parent: String, registry: RemotableRegistry = remoteTestRegistry, heartbeat: Duration = .milliseconds(100),
    liveness: Int = 20, pool: String = "default"
) throws -> RemoteRuntime {
    var configuration = RemoteRuntimeConfiguration(name: name)
    configuration.parentEndpoint = parent
    configuration.pool = pool
    configuration.registry = registry
    configuration.heartbeatInterval = heartbeat
    configuration.heartbeatLiveness = liveness
    return try RemoteRuntime(configuration: configuration)
}

/// A worker process (the `remote-test-worker` helper), killed when the test ends.
final class WorkerProcess: Sendable {
    let process: ChildProcess
    /// The worker's name (`--name`).
    let name: String

    init(name: String, connect: String, listen: String? = nil, pool: String? = nil) throws {
        self.name = name
        var arguments = ["--name", name, "--connect", connect]
        if let listen { arguments += ["--listen", listen] }
        if let pool { arguments += ["--pool", pool] }
        process = try ChildProcess(Self.executableURL.path, arguments: arguments, standardInput: .null, standardOutput: .null)
    }

    /// Asks the worker to leave in order (SIGTERM): it drains (at most 5 s) and exits, and the
    /// process's reaping thread collects it. A test's cleanup does not wait for that, which would
    /// hold a thread of the concurrency pool meanwhile; `stopped()` waits.
    func stop() {
        if process.isRunning { process.terminate() }
    }

    /// Asks the worker to leave in order (SIGTERM) and waits until it has exited.
    func stopped() async {
        stop()
        await process.waitForExit()
    }

    /// SIGSTOPs the worker: it stays connected but runs nothing (a stall, a paused VM).
    func suspend() {
        Foundation.kill(process.processIdentifier, SIGSTOP)
    }

    /// SIGCONTs a suspended worker.
    func resume() {
        Foundation.kill(process.processIdentifier, SIGCONT)
    }

    /// Whether the kernel reports the worker stopped (state `T` in /proc/PID/stat): a SIGSTOP
    /// takes effect asynchronously.
    var isSuspended: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).first == "T"
    }

    /// SIGKILLs the worker and reaps it.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    static var executableURL: URL {
        // The helper is built next to the test bundle (the test target depends on it).
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("remote-test-worker")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("remote-test-worker")
    }
}
