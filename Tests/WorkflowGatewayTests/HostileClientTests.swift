import Foundation
import NIOCore
import Prometheus
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowCluster
import WorkflowGateway

/// The gateway against clients that break HTTP or hold connections open: real sockets on a real
/// server. Each test counts the gateway's connection descriptors before (none) and after (none
/// again, while the test's own sockets are still open: the server closed fully by itself).
@Suite("Gateway against hostile clients")
struct HostileClientTests {
    /// Limits short enough that a test waits little; the safety timeout bounds every wait.
    static func limits(
        header: Duration = .seconds(30), body: Duration = .seconds(30), idle: Duration = .seconds(30), maxConnections: Int = 1_000
    ) -> GatewayLimits {
        GatewayLimits(headerTimeout: header, bodyTimeout: body, idleTimeout: idle, maxConnections: maxConnections, closeLinger: .milliseconds(500))
    }

    static func closes(_ registry: PrometheusCollectorRegistry, _ reason: String) -> Double {
        metricValue(registry, #"workflow_gateway_connections_closed_total{reason="\#(reason)"}"#)
    }

    @Test("a POST over the body limit and a GET with a 16 MiB body: 413, then the connection is closed fully")
    func oversizedBodies() async throws {
        let (options, registry) = LiveGateway.options(limits: Self.limits(), maxEventBytes: 8 << 20)
        try await LiveGateway.serving(options: options) { port in
            #expect(GatewayDescriptors.count(port: port) == 0)
            let requests = [
                ("POST /api/events/some-token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n", 9 << 20),
                ("GET /health/live HTTP/1.1\r\nHost: x\r\n", 16 << 20),
            ]
            for (head, length) in requests {
                try await RawConnection.with(port: port, "413 for \(head.prefix(20))") { reader, writer in
                    try await writer.write(ByteBuffer(string: head + "Content-Length: \(length)\r\n\r\n"))
                    let chunk = ByteBuffer(repeating: UInt8(ascii: "1"), count: 1 << 20)
                    try await writer.write(chunk)
                    let answer = try await reader.answer()
                    #expect(answer.status == 413, "\(head)")
                    #expect(answer.headers["connection"] == "close")
                    #expect(answer.body.contains(#""error":"too-large""#))
                    // The client goes on sending its body: the server reads and discards it
                    // (a server that stopped reading would stall this write) …
                    for _ in 1..<(length >> 20) {
                        do { try await writer.write(chunk) } catch { break }
                    }
                    // … and closes: its side first, then fully, with this socket still open.
                    _ = try await reader.untilClosed()
                    try await GatewayDescriptors.waitForNone(port: port, "the gateway to close the connection fully")
                }
            }
            #expect(Self.closes(registry, "too-large") == 2)
            // Still serving.
            try await RawConnection.with(port: port, "a good request after") { reader, writer in
                try await writer.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                #expect(try await reader.answer().status == 200)
            }
            try await GatewayDescriptors.waitForNone(port: port, "no descriptor left")
        }
    }

    @Test("a chunked event over the limit with Connection: close: the route's 413, then the rest is read and dropped and the connection closed fully")
    func chunkedOverLimitWithClose() async throws {
        let (options, _) = LiveGateway.options(limits: Self.limits(), maxEventBytes: 1 << 20)
        try await LiveGateway.serving(options: options) { port in
            try await RawConnection.with(port: port, "a chunked 9 MiB event") { reader, writer in
                try await writer.write(
                    ByteBuffer(
                        string: "POST /api/events/some-token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"))
                var chunk = ByteBuffer(string: "100000\r\n")
                chunk.writeRepeatingByte(UInt8(ascii: "1"), count: 1 << 20)
                chunk.writeString("\r\n")
                try await writer.write(chunk)
                try await writer.write(chunk)
                let answer = try await reader.answer()
                #expect(answer.status == 413)
                #expect(answer.body.contains(#""error":"too-large""#))
                for _ in 0..<7 {
                    do { try await writer.write(chunk) } catch { break }
                }
                _ = try await reader.untilClosed()
                try await GatewayDescriptors.waitForNone(port: port, "the gateway to close the connection fully")
            }
        }
    }

    @Test("500 connections trickling their headers get 408 and are closed at the header timeout")
    func slowHeaders() async throws {
        try raiseDescriptorLimit(to: 4_096)
        let clients = 500
        let (options, registry) = LiveGateway.options(limits: Self.limits(header: .seconds(2)))
        try await LiveGateway.serving(options: options) { port in
            #expect(GatewayDescriptors.count(port: port) == 0)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<clients {
                    group.addTask { try await Self.tricklingClient(port: port) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == clients)
            #expect(statuses.allSatisfy { $0 == 408 }, "\(Set(statuses))")
            try await GatewayDescriptors.waitForNone(port: port, "the gateway to close all 500")
            #expect(Self.closes(registry, "header-timeout") == Double(clients))
            try await eventually("no connection counted") { metricValue(registry, "workflow_gateway_connections") == 0 }
        }
    }

    /// Sends a request head a header line at a time, every 200 ms (never idle, never done),
    /// until the server answers and closes.
    static func tricklingClient(port: Int) async throws -> Int {
        try await RawConnection.with(port: port, "a trickling client") { reader, writer in
            try await writer.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: x\r\n"))
            let trickle = RawConnection.trickle("X-Slow: 1\r\n", every: .milliseconds(200), to: writer)
            defer { trickle.cancel() }
            let answer = try await reader.answer()
            _ = try await reader.untilClosed()
            return answer.status
        }
    }

    @Test("a body trickled past the body timeout: 408 and closed; an idle connection: closed at the idle timeout")
    func slowBodyAndIdle() async throws {
        let (options, registry) = LiveGateway.options(limits: Self.limits(body: .seconds(1), idle: .milliseconds(500)))
        try await LiveGateway.serving(options: options) { port in
            try await RawConnection.with(port: port, "a trickled body") { reader, writer in
                try await writer.write(
                    ByteBuffer(string: "POST /api/events/t HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n1"))
                let trickle = RawConnection.trickle(" ", every: .milliseconds(100), to: writer)
                defer { trickle.cancel() }
                let answer = try await reader.answer()
                #expect(answer.status == 408)
                #expect(answer.body.contains(#""error":"body-timeout""#))
                _ = try await reader.untilClosed()
                try await GatewayDescriptors.waitForNone(port: port, "the slow body's connection closed fully")
            }
            try await RawConnection.with(port: port, "an idle client") { reader, writer in
                try await writer.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"))
                #expect(try await reader.answer().status == 200)
                let after = try await reader.untilClosed()
                #expect(after.isEmpty, "an idle connection is closed without an answer: \(after)")
                try await GatewayDescriptors.waitForNone(port: port, "the idle connection closed fully")
            }
            #expect(Self.closes(registry, "body-timeout") == 1)
            #expect(Self.closes(registry, "idle-timeout") == 1)
        }
    }

    @Test("over the connection limit: 503 with Retry-After and closed; below it again, served")
    func connectionLimit() async throws {
        let (options, registry) = LiveGateway.options(limits: Self.limits(maxConnections: 2))
        try await LiveGateway.serving(options: options) { port in
            let first = try await RawConnection.open(port: port)
            let second = try await RawConnection.open(port: port)
            try await eventually("two connections counted") { metricValue(registry, "workflow_gateway_connections") == 2 }
            try await RawConnection.with(port: port, "a third connection") { reader, _ in
                let answer = try await reader.answer()
                #expect(answer.status == 503)
                #expect(answer.headers["retry-after"] == "1")
                #expect(answer.body.contains(#""error":"connection-limit""#))
                _ = try await reader.untilClosed()
            }
            #expect(Self.closes(registry, "connection-limit") == 1)
            try await first.channel.executeThenClose { _, _ in }
            try await eventually("one connection counted") { metricValue(registry, "workflow_gateway_connections") == 1 }
            try await RawConnection.with(port: port, "a connection below the limit") { reader, writer in
                try await writer.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                #expect(try await reader.answer().status == 200)
            }
            try await second.channel.executeThenClose { _, _ in }
            try await GatewayDescriptors.waitForNone(port: port, "no descriptor left")
        }
    }

    @Test("requests HTTP/1.1 cannot carry are answered with the status HTTP names, then closed", arguments: MalformedRequest.allCases)
    func malformedRequests(_ malformed: MalformedRequest) async throws {
        let (what, request, status) = (malformed.rawValue, malformed.bytes, malformed.status)
        let (options, registry) = LiveGateway.options(limits: Self.limits())
        try await LiveGateway.serving(options: options) { port in
            #expect(GatewayDescriptors.count(port: port) == 0)
            try await RawConnection.with(port: port, what) { reader, writer in
                try await writer.write(ByteBuffer(bytes: request))
                let answer = try await reader.answer()
                #expect(answer.status == status, "\(what): \(answer.status) \(answer.body)")
                #expect(answer.headers["connection"] == "close", "\(what)")
                #expect(answer.headers["content-type"] == "application/json; charset=utf-8", "\(what)")
                #expect(answer.body.contains(#""message":"#), "\(what)")
                _ = try await reader.untilClosed()
                try await GatewayDescriptors.waitForNone(port: port, "\(what): the connection closed fully")
            }
            let refused = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            #expect(refused.contains("workflow_gateway_connections_closed_total"), "\(what)")
            try await RawConnection.with(port: port, "\(what): a good request after") { reader, writer in
                try await writer.write(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                #expect(try await reader.answer().status == 200)
            }
        }
    }

    /// Raises this process's soft descriptor limit to `wanted` (within the hard limit) for the
    /// tests that open hundreds of connections: both ends are in this process.
    func raiseDescriptorLimit(to wanted: rlim_t) throws {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= wanted, "the descriptor limit (\(limit.rlim_max)) is too low for 500 connections at both ends")
    }
}

/// A request HTTP/1.1 cannot carry, and the status HTTP names for it.
enum MalformedRequest: String, CaseIterable, Sendable {
    case hugeHeader = "a 1 MiB header"
    case manyHeaders = "20,000 headers"
    case hugePath = "a 1 MiB path"
    case invalidBytes = "raw invalid bytes"
    case unknownMethod = "an unknown method"
    case http09 = "HTTP/0.9"
    case lengthAndChunked = "Content-Length with Transfer-Encoding"
    case duplicateLength = "duplicate Content-Length"

    var bytes: [UInt8] {
        switch self {
        case .hugeHeader: Array("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 1 << 20))\r\n\r\n".utf8)
        case .manyHeaders: Array(("GET /health/live HTTP/1.1\r\nHost: x\r\n" + (0..<20_000).map { "X-H\($0): v\r\n" }.joined() + "\r\n").utf8)
        case .hugePath: Array("GET /\(String(repeating: "p", count: 1 << 20)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        case .invalidBytes: [0xFF, 0xFE, 0x00, 0x01, 0x80, 0xC3, 0x28, 0x0D, 0x0A, 0x0D, 0x0A]
        case .unknownMethod: Array("FROBNICATE /health/live HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        case .http09: Array("GET /health/live\r\n".utf8)
        case .lengthAndChunked:
            Array(
                "POST /api/events/t HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n1\r\n0\r\n\r\n"
                    .utf8)
        case .duplicateLength:
            Array("POST /api/events/t HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n12".utf8)
        }
    }

    var status: Int {
        switch self {
        case .hugeHeader, .manyHeaders: 431
        case .hugePath: 414
        case .invalidBytes, .lengthAndChunked, .duplicateLength: 400
        case .unknownMethod: 501
        case .http09: 505
        }
    }
}
