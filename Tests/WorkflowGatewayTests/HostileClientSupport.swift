import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import RemoteTestSupport
import WorkflowClusterTesting
import WorkflowCluster
import WorkflowGateway

/// A real gateway on a free loopback port, for tests that speak raw TCP to it.
enum LiveGateway {
    /// Serves the gateway over a tally root while `body` runs with its port, then stops it.
    static func serving<T: Sendable>(
        options: GatewayOptions, _ body: @escaping @Sendable (Int) async throws -> T
    ) async throws -> T {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = ClusterGateway.application(
            session: session, runtime: nil, configuration: ClusterConfiguration(coordinatorEndpoint: "ipc:///unused"), options: options,
            logger: GatewayTesting.quietLogger
        ) { address in
            continuation.yield(address.port)
        }
        // The session's loop is a thread of its own: it is stopped whatever happens.
        do {
            let result = try await serve(application, ports: ports, body)
            await session.stop()
            return result
        } catch {
            await session.stop()
            throw error
        }
    }

    private static func serve<T: Sendable>(
        _ application: some ApplicationProtocol, ports: AsyncStream<Int>, _ body: @escaping @Sendable (Int) async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await application.run()
                return nil
            }
            defer { group.cancelAll() }
            let port = try await withSafetyTimeout("the gateway to listen") {
                for await port in ports { return port }
                throw WaitFailure(description: "no port")
            }
            return try await body(port)
        }
    }

    /// Options on a free loopback port with `limits`, and the registry their metrics go to.
    static func options(limits: GatewayLimits, maxEventBytes: Int = 1 << 20) -> (GatewayOptions, PrometheusCollectorRegistry) {
        let registry = PrometheusCollectorRegistry()
        var options = GatewayTesting.options(registry: registry, maxEventBytes: maxEventBytes)
        options.limits = limits
        return (options, registry)
    }
}

/// One raw TCP connection to a gateway: the test writes bytes HTTP clients would refuse to send
/// and reads what comes back. The client keeps its socket open when the server closes its side
/// (remote half-closure allowed), so a test sees whether the *server* closes fully.
struct RawConnection: Sendable {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    static func open(port: Int) async throws -> RawConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            // Not NIO's 10 s: 500 clients connecting at once overflow the listener's backlog
            // while a loaded machine starves its accept loop, and a dropped SYN is sent again
            // only after 1, 3 and 7 s (the test failed so, twice, in a busy parallel pass). The
            // whole exchange stays bounded by the safety timeout.
            .connectTimeout(.seconds(60))
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return RawConnection(channel: channel)
    }

    /// Opens a connection, runs `body` with its reader and writer (bounded by the safety
    /// timeout), and closes it.
    static func with<T: Sendable>(
        port: Int, _ what: String, _ body: @escaping @Sendable (inout Reader, NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> T
    ) async throws -> T {
        try await withSafetyTimeout(what) {
            let connection = try await open(port: port)
            return try await connection.channel.executeThenClose { inbound, outbound in
                var reader = Reader(iterator: inbound.makeAsyncIterator())
                return try await body(&reader, outbound)
            }
        }
    }

    /// Sends `text` every `interval` (a slow client's pace, not a synchronisation) until
    /// cancelled or the connection fails.
    static func trickle(_ text: String, every interval: Duration, to writer: NIOAsyncChannelOutboundWriter<ByteBuffer>) -> Task<Void, any Error> {
        Task {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                try await writer.write(ByteBuffer(string: text))
            }
        }
    }

    /// Reads an HTTP/1 answer, or everything until the server closes.
    struct Reader {
        var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        var pending = ByteBuffer()
        var ended = false

        /// One answer: its status, header fields (names lowercased) and body (by Content-Length).
        mutating func answer() async throws -> RawAnswer {
            while true {
                if let answer = parseAnswer() { return answer }
                guard try await more() else { throw WaitFailure(description: "closed before an answer: \(String(buffer: pending))") }
            }
        }

        /// Reads until the server closes (its FIN); returns what came meanwhile.
        mutating func untilClosed() async throws -> String {
            while try await more() {}
            return String(buffer: pending)
        }

        private mutating func more() async throws -> Bool {
            guard !ended else { return false }
            do {
                guard var buffer = try await iterator.next() else {
                    ended = true
                    return false
                }
                pending.writeBuffer(&buffer)
                return true
            } catch {
                // A reset after the answer is a close too.
                ended = true
                return false
            }
        }

        private mutating func parseAnswer() -> RawAnswer? {
            let text = String(buffer: pending)
            guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
            let lines = text[..<headEnd.lowerBound].components(separatedBy: "\r\n")
            guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else { return nil }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let headBytes = text[..<headEnd.upperBound].utf8.count
            guard pending.readableBytes >= headBytes + length else { return nil }
            pending.moveReaderIndex(forwardBy: headBytes)
            let body = pending.readString(length: length) ?? ""
            return RawAnswer(status: status, headers: headers, body: body)
        }
    }
}

/// An HTTP answer as read off the socket.
struct RawAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: String
}

/// The gateway's descriptors: the process's open descriptors that are TCP connections on the
/// gateway's port (its listening socket excepted). Counting only these keeps the count exact
/// while other tests in the process open and close descriptors of their own.
enum GatewayDescriptors {
    static func count(port: Int) -> Int {
        let inodes = connectionInodes(localPort: port)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        return entries.count { entry in
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                link.hasPrefix("socket:["), let inode = UInt64(link.dropFirst(8).dropLast())
            else { return false }
            return inodes.contains(inode)
        }
    }

    /// The inodes of TCP sockets whose local port is `localPort`, except listening ones.
    private static func connectionInodes(localPort: Int) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let portText = fields[1].split(separator: ":").last, Int(portText, radix: 16) == localPort,
                    fields[3] != "0A", let inode = UInt64(fields[9])
                else { continue }
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// Waits until the gateway holds no connection descriptor (bounded by the safety timeout).
    static func waitForNone(port: Int, _ what: String) async throws {
        try await eventually(what) { count(port: port) == 0 }
    }
}

/// Polls `condition` (kernel state, which has no event stream) until it holds, bounded by the
/// safety timeout; read once more after the deadline before failing.
func eventually(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + safetyTimeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            if condition() { return }
            throw WaitFailure(description: "\(what): timed out after \(safetyTimeout)")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Reads a counter or gauge of the registry's Prometheus text (0 when absent).
func metricValue(_ registry: PrometheusCollectorRegistry, _ series: String) -> Double {
    let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
        return Double(line.dropFirst(series.count + 1)) ?? 0
    }
    return 0
}
