import Foundation

/// One daemon process a test started (a coordinator, a worker, any helper process), with its
/// standard output and error captured line by line and, if asked for, its standard input open.
///
/// Tests synchronise on what a daemon prints, never on time: `stdout.first(_:where:)` and
/// `stderr.first(_:where:)` return as soon as a matching line exists. The process is SIGKILLed
/// and reaped in `deinit` if still running, so a failing test leaves no orphan; a `DaemonGroup`
/// additionally stops its daemons in order and reports any left running.
public final class DaemonProcess: Sendable {
    /// What the test calls it in failure messages.
    public let label: String
    /// The running process.
    public let process: ChildProcess
    /// Standard output (for the cluster daemons: renderings and statuses in JSON mode).
    public let stdout = LineLog()
    /// Standard error (for the cluster daemons: the log).
    public let stderr = LineLog()
    private let exit = ProcessExit()
    private let input: FileHandle?

    /// Starts `executable` (an absolute path, or the name of an executable built next to the
    /// test bundle) with `arguments`, adding `environment` to the test's own. With
    /// `standardInput` the daemon reads what `send(line:)` writes; otherwise it reads nothing.
    public init(
        _ executable: String, _ arguments: [String], label: String, environment: [String: String] = [:], standardInput: Bool = false
    ) throws {
        self.label = label
        let path = executable.hasPrefix("/") ? executable : Self.executableURL(executable).path
        let inPipe = standardInput ? Pipe() : nil
        input = inPipe?.fileHandleForWriting
        let out = Pipe()
        let err = Pipe()
        // Tests start daemons concurrently: without close-on-exec, one daemon could inherit another's
        // pipe and hold it open, delaying that pipe's end (which `waitForExit` waits for).
        for pipe in [out, err] + (inPipe.map { [$0] } ?? []) {
            for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
        }
        let stdout = stdout
        let stderr = stderr
        let exit = exit
        process = try ChildProcess(
            path, arguments: arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            standardInput: inPipe.map { .descriptor($0.fileHandleForReading.fileDescriptor) } ?? .null,
            standardOutput: .descriptor(out.fileHandleForWriting.fileDescriptor),
            standardError: .descriptor(err.fileHandleForWriting.fileDescriptor),
            onExit: { status, _ in exit.record(status) })
        // The child holds its ends now: this process keeps only its own, so each pipe ends when
        // the daemon exits.
        try out.fileHandleForWriting.close()
        try err.fileHandleForWriting.close()
        try inPipe?.fileHandleForReading.close()
        Self.drain(out.fileHandleForReading, into: stdout, name: "\(label) stdout")
        Self.drain(err.fileHandleForReading, into: stderr, name: "\(label) stderr")
    }

    /// Reads `handle` to its end on a dedicated thread (blocking reads; a pipe's end is the
    /// daemon's exit), appending to `log`.
    private static func drain(_ handle: FileHandle, into log: LineLog, name: String) {
        let thread = Thread {
            // What one read got (`read(upToCount:)` would wait for the whole count); empty means
            // the end of the pipe. Not `availableData`: it traps on an interrupted read.
            while true {
                let data = PipeRead.some(from: handle)
                log.append(data)
                if data.isEmpty { return }
            }
        }
        thread.name = name
        thread.start()
    }

    /// The daemon's process id.
    public var pid: Int32 { process.processIdentifier }

    /// Whether the process has not exited (per its termination handler, not only Foundation's
    /// bookkeeping).
    public var isRunning: Bool {
        exit.status == nil
    }

    /// Waits for the process to exit and returns its status.
    @discardableResult
    public func waitForExit() async throws -> Int32 {
        try await withSafetyTimeout("\(label) to exit") { [exit, label, stdout, stderr] in
            guard let status = await exit.wait() else { throw WaitFailure(description: "\(label) to exit: cancelled") }
            // The reader threads may still hold the last bytes: wait for both pipes' ends too.
            await stdout.waitForEnd()
            await stderr.waitForEnd()
            return status
        }
    }

    /// SIGTERM, then waits for the exit; returns its status.
    @discardableResult
    public func terminate() async throws -> Int32 {
        if isRunning { kill(pid, SIGTERM) }
        return try await waitForExit()
    }

    /// Writes `line` and a newline to the daemon's standard input (started with
    /// `standardInput: true`).
    public func send(line: String) throws {
        guard let input else { throw WaitFailure(description: "\(label) was started without a standard input to write to") }
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// SIGKILL and reap (cleanup of a test that failed).
    public func forceKill() {
        if isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Where the executable `name` is: built next to the test bundle (the test target depends on
    /// it), or in a folder above it.
    public static func executableURL(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
    }
}
