import Foundation
import Testing
import WorkflowClusterTesting
import ZeroMQ

/// Contexts, sockets and connections release every file descriptor they open.
@Suite struct HandleHygieneTests {
    /// 2,000 full lifecycles (context, bound and connected sockets, one message, teardown) run in a
    /// `zmq-test-peer` process of their own, which counts its own descriptors before and after:
    /// tests running beside this one in the test process (runtimes, daemons' pipes) cannot move
    /// that count. There only libzmq's lazily made state may move it; a leak of even one
    /// descriptor per lifecycle shows 2,000 or more (a leaked socket or context holds several).
    @Test func twoThousandLifecyclesDoNotLeakFileDescriptors() throws {
        let output = Pipe()
        let process = try ChildProcess(
            try PeerProcess.executableURL().path, arguments: ["lifecycles", "2000"],
            standardOutput: .descriptor(output.fileHandleForWriting.fileDescriptor))
        try output.fileHandleForWriting.close()
        let printed = String(decoding: PipeRead.all(from: output.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "zmq-test-peer lifecycles: \(printed)")
        let counts = printed.split(separator: " ").dropFirst().compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let (before, after) = try (#require(counts.first), #require(counts.dropFirst().first))
        #expect(after - before < 200, "open descriptors went from \(before) to \(after)")
    }
}
