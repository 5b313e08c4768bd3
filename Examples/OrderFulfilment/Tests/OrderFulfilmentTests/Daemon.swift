import Foundation
import Synchronization

/// One daemon process a test started, its output captured line by line and its standard input
/// open for writing. SIGKILLed in `deinit` if still running, so a failed test leaves no orphan.
final class Daemon: Sendable {
    let label: String
    let process: Process
    let stdout = LineLog()
    let stderr = LineLog()
    private let input: FileHandle
    private let exitStatus = ExitStatus()
    private let exited: AsyncStream<Int32>

    /// Starts the executable `name`, built next to the test bundle, with `arguments`.
    init(_ name: String, _ arguments: [String], label: String) throws {
        self.label = label
        let process = Process()
        process.executableURL = Self.executableURL(name)
        process.arguments = arguments
        let (inPipe, outPipe, errPipe) = (Pipe(), Pipe(), Pipe())
        // Close-on-exec: a daemon started concurrently must not inherit another's pipe.
        for pipe in [inPipe, outPipe, errPipe] {
            for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
        }
        process.standardInput = inPipe
        process.standardOutput = outPipe
        process.standardError = errPipe
        input = inPipe.fileHandleForWriting
        let (exited, continuation) = AsyncStream<Int32>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.exited = exited
        self.process = process
        let status = exitStatus
        process.terminationHandler = { process in
            status.value.withLock { $0 = process.terminationStatus }
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        Self.drain(outPipe.fileHandleForReading, into: stdout, name: "\(label) stdout")
        Self.drain(errPipe.fileHandleForReading, into: stderr, name: "\(label) stderr")
        try process.run()
    }

    /// Reads `handle` to its end on a thread of its own (blocking reads).
    private static func drain(_ handle: FileHandle, into log: LineLog, name: String) {
        let thread = Thread {
            while true {
                let data = handle.availableData
                log.append(data)
                if data.isEmpty { return }
            }
        }
        thread.name = name
        thread.start()
    }

    var isRunning: Bool { exitStatus.value.withLock { $0 == nil } }

    /// Writes one line to the daemon's standard input.
    func send(line: String) throws {
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the exit, and for both pipes' ends (so `stdout` and `stderr` hold every line
    /// the daemon wrote), and returns the status.
    @discardableResult
    func waitForExit() async throws -> Int32 {
        let (exited, label) = (self.exited, self.label)
        let status: Int32
        if let known = exitStatus.value.withLock({ $0 }) {
            status = known
        } else {
            status = try await withTimeout("\(label) to exit") {
                for await status in exited { return status }
                throw TestFailure("\(label): no exit status")
            }
        }
        try await stdout.waitForEnd("the end of \(label)'s standard output")
        try await stderr.waitForEnd("the end of \(label)'s standard error")
        return status
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    func terminate() async throws -> Int32 {
        if isRunning { kill(process.processIdentifier, SIGTERM) }
        return try await waitForExit()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The executables are built next to the test bundle (the test target depends on them).
    static func executableURL(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
    }
}

/// A process's exit status once known (shared with its termination handler).
final class ExitStatus: Sendable {
    let value = Mutex<Int32?>(nil)
}
