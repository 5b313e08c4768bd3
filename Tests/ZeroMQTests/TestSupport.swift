import Foundation
import Testing
import WorkflowClusterTesting
import ZeroMQ

/// Endpoints that cannot collide between tests running in parallel in one process, or
/// between concurrent test runs.
enum TestEndpoint {
    /// A fresh `ipc://` path under /tmp, unique per process and call.
    static func ipc() -> String {
        "ipc:///tmp/zmqtest-\(getpid())-\(UUID().uuidString.prefix(13))"
    }

    /// A fresh `inproc://` name.
    static func inproc() -> String {
        "inproc://zmqtest-\(UUID().uuidString)"
    }

    /// Loopback TCP with an OS-chosen port; read `lastEndpoint` after binding.
    static let tcpAnyPort = "tcp://127.0.0.1:*"
}

/// The transports cross-process tests run over.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ipc
    case tcp

    var bindEndpoint: String {
        switch self {
        case .ipc: TestEndpoint.ipc()
        case .tcp: TestEndpoint.tcpAnyPort
        }
    }

    var testDescription: String { rawValue }
}

extension Array where Element == UInt8 {
    /// UTF-8 bytes of a string, for readable frame literals.
    static func utf8(_ string: String) -> [UInt8] { Array(string.utf8) }
}

/// Creates a socket with linger 0 so a test that leaves undeliverable messages behind can
/// never make the context's termination block.
func makeSocket(_ type: ZMQSocketType, _ context: ZMQContext) throws -> ZMQSocket {
    let socket = try ZMQSocket(type, context: context)
    try socket.set(.linger, 0)
    return socket
}

/// A PAIR socket bound to a fresh inproc endpoint and a PAIR connected to it.
func makeConnectedPair(_ context: ZMQContext) throws -> (bound: ZMQSocket, connected: ZMQSocket) {
    let endpoint = TestEndpoint.inproc()
    let bound = try makeSocket(.pair, context)
    try bound.bind(endpoint)
    let connected = try makeSocket(.pair, context)
    try connected.connect(endpoint)
    return (bound, connected)
}

/// Number of file descriptors currently open in this process.
func openFileDescriptorCount() throws -> Int {
    #if os(Linux)
    let directory = "/proc/self/fd"
    #else
    let directory = "/dev/fd"
    #endif
    return try FileManager.default.contentsOfDirectory(atPath: directory).count
}

/// Locates and runs the `zmq-test-peer` helper executable.
struct PeerProcess {
    enum LocateError: Error, CustomStringConvertible {
        case notFound([String])
        var description: String {
            switch self {
            case .notFound(let paths): "zmq-test-peer not found; looked in: \(paths.joined(separator: ", "))"
            }
        }
    }

    let process: ChildProcess

    /// Finds the helper next to the test binary (works for the default `.build` and for any
    /// `--scratch-path`), falling back to `ZMQ_TEST_PEER` and to build directories found by
    /// walking up from this source file.
    static func executableURL() throws -> URL {
        let fileManager = FileManager.default
        var directories: [URL] = []
        if let override = ProcessInfo.processInfo.environment["ZMQ_TEST_PEER"] {
            return URL(fileURLWithPath: override)
        }
        let argv0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        directories.append(argv0.deletingLastPathComponent())
        for bundle in [Bundle.main] + Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        // Walk up from Tests/ZeroMQTests/TestSupport.swift to the package root and look in
        // every .build* directory's debug/release product folders.
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        if let entries = try? fileManager.contentsOfDirectory(atPath: packageRoot.path) {
            for entry in entries where entry.hasPrefix(".build") {
                let scratch = packageRoot.appendingPathComponent(entry)
                directories.append(scratch.appendingPathComponent("debug"))
                directories.append(scratch.appendingPathComponent("release"))
            }
        }
        let candidates = directories.map { $0.appendingPathComponent("zmq-test-peer") }
        if let found = candidates.first(where: { fileManager.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw LocateError.notFound(candidates.map(\.path))
    }

    /// Launches the helper with `arguments`.
    static func launch(_ arguments: [String]) throws -> PeerProcess {
        PeerProcess(process: try ChildProcess(try executableURL().path, arguments: arguments))
    }

    /// Waits for the helper to exit and returns its exit status.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills the helper if it is still running and reaps it, so no test leaves a process.
    func terminateAndReap() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Frames made of the UTF-8 bytes of each string.
func frames(_ strings: String...) -> [[UInt8]] {
    strings.map { Array($0.utf8) }
}
