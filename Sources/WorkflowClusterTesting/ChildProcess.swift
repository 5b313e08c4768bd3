import Dispatch
import Foundation
import Synchronization

/// A process the test support starts with `posix_spawn`, and a thread that reaps it.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to find the highest
/// open descriptor and copies each entry's whole name buffer, reading past the end of the
/// directory buffer when an entry ends at a page's edge; a test process holding hundreds of
/// descriptors (sockets, daemons' pipes) crashed there once in a few full runs. Here nothing
/// lists descriptors: the child gets its three standard streams and nothing else (glibc's
/// `posix_spawn_file_actions_addclosefrom_np`), whatever another library left open without
/// close-on-exec; the test support also sets it on every pipe end it makes.
public final class ChildProcess: Sendable {
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module
    /// leaves GNU extensions out, so it is looked up): closes every descriptor from the one given
    /// on in the child. `nil` on an older C library: then the child inherits what is left
    /// without close-on-exec, as before.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
        }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// The test process's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// This open descriptor of the test process (one end of a pipe, typically).
        case descriptor(Int32)
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        /// It called `exit` (the status is its exit code).
        case exit
        /// A signal ended it (the status is the signal's number).
        case uncaughtSignal
    }

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The executable's path.
        public var path: String
        /// `posix_spawn`'s error, in words.
        public var reason: String
        public var description: String { "cannot start \(path): \(reason)" }
    }

    /// The child's process id.
    public let processIdentifier: Int32
    private let ending = Ending()
    private let exited = DispatchGroup()

    /// Starts `executable` with `arguments` and `environment` (`nil`: the test process's), its
    /// standard streams as given. `onExit` runs on the reaping thread once the child has ended.
    public init(
        _ executable: String, arguments: [String], environment: [String: String]? = nil, standardInput: Stream = .null,
        standardOutput: Stream = .inherit, standardError: Stream = .inherit,
        onExit: (@Sendable (Int32, TerminationReason) -> Void)? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, target)
            }
        }
        // Nothing else: a descriptor another library left without close-on-exec (a database
        // client's socket) would keep the other end from seeing it closed for as long as the
        // child lives (a PostgreSQL session the test closed staying alive in a daemon).
        _ = Self.closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with no signal blocked and the usual dispositions, whatever the test
        // process (which ignores SIGPIPE, for one) has set.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(path: executable, reason: String(cString: strerror(result))) }
        processIdentifier = pid
        exited.enter()
        let spawned = pid
        let thread = Thread { [ending, exited] in
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) == -1, errno == EINTR {}
            let signal = status & 0x7f
            let end = signal == 0 ? (status: (status >> 8) & 0xff, reason: TerminationReason.exit) : (status: signal, reason: .uncaughtSignal)
            ending.value.withLock { $0 = end }
            onExit?(end.status, end.reason)
            exited.leave()
        }
        thread.name = "reaper \(spawned)"
        thread.start()
    }

    /// Whether the child has not ended (as its reaping thread saw).
    public var isRunning: Bool { ending.value.withLock { $0 == nil } }

    /// Its exit code or the signal that ended it (0 while it runs).
    public var terminationStatus: Int32 { ending.value.withLock { $0?.status ?? 0 } }

    /// How it ended (`.exit` while it runs).
    public var terminationReason: TerminationReason { ending.value.withLock { $0?.reason ?? .exit } }

    /// Sends SIGTERM.
    public func terminate() {
        if isRunning { kill(processIdentifier, SIGTERM) }
    }

    /// Blocks until the child has ended and been reaped. For synchronous code and a child that
    /// ends at once (SIGKILLed); an async test awaits `waitForExit()`, which holds no thread.
    public func waitUntilExit() {
        exited.wait()
    }

    /// Waits until the child has ended and been reaped, without holding a thread of the
    /// concurrency pool (one per core: a test blocked in `waitUntilExit` for a draining worker
    /// stalls the others of a parallel run).
    public func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            exited.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Runs `executable` with `arguments` to its end (standard input `/dev/null`) and returns its
    /// exit status and everything it wrote to standard output and error, interleaved.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let pipe = Pipe()
        _ = fcntl(pipe.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let child = try ChildProcess(
            executable, arguments: arguments, standardOutput: .descriptor(pipe.fileHandleForWriting.fileDescriptor),
            standardError: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
        try pipe.fileHandleForWriting.close()
        let output = String(decoding: PipeRead.all(from: pipe.fileHandleForReading), as: UTF8.self)
        child.waitUntilExit()
        return (child.terminationStatus, output)
    }
}

/// How a child ended, once its reaping thread knows (a class, so that thread can hold it).
private final class Ending: Sendable {
    let value = Mutex<(status: Int32, reason: ChildProcess.TerminationReason)?>(nil)
}
