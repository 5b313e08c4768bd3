import NIOCore
import Testing
import WorkflowCluster
@testable import WorkflowGateway

/// The connection guard's logic as values: which deadline runs when, and what answers what.
@Suite("Gateway connection deadlines and refusals")
struct ConnectionDeadlinesTests {
    static let limits = GatewayLimits(headerTimeout: .seconds(1), bodyTimeout: .seconds(2), idleTimeout: .seconds(3))
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test("head deadline from opening, body deadline from the head, none while answering, idle after the answer, head again on a byte")
    func lifecycle() {
        var deadlines = ConnectionDeadlines(limits: Self.limits, now: Self.start)
        #expect(deadlines.waiting == .head && deadlines.deadline == Self.start + .seconds(1))
        #expect(deadlines.expiry(now: Self.start + .seconds(1)) == .headerTimeout)
        deadlines.receivedHead(now: Self.start + .milliseconds(500))
        #expect(deadlines.waiting == .body && deadlines.deadline == Self.start + .milliseconds(2500))
        #expect(deadlines.mayAnswer, "no answer started for the request being read")
        deadlines.receivedEnd(now: Self.start + .seconds(1))
        #expect(deadlines.waiting == .nothing && deadlines.deadline == nil)
        deadlines.sentHead()
        #expect(!deadlines.mayAnswer)
        deadlines.sentEnd(now: Self.start + .seconds(2))
        #expect(deadlines.waiting == .nextRequest && deadlines.deadline == Self.start + .seconds(5))
        #expect(deadlines.expiry(now: Self.start + .seconds(4)) == nil, "not yet")
        #expect(deadlines.expiry(now: Self.start + .seconds(5)) == .idleTimeout)
        deadlines.receivedBytes(now: Self.start + .seconds(4))
        #expect(deadlines.waiting == .head && deadlines.deadline == Self.start + .seconds(5))
    }

    @Test("an answer sent before the body ended (413 by a route) keeps the body deadline until the end; a WebSocket has none")
    func earlyAnswerAndUpgrade() {
        var deadlines = ConnectionDeadlines(limits: Self.limits, now: Self.start)
        deadlines.receivedHead(now: Self.start)
        deadlines.sentHead()
        deadlines.sentEnd(now: Self.start)
        #expect(deadlines.waiting == .body && deadlines.expiry(now: Self.start + .seconds(2)) == .bodyTimeout)
        #expect(!deadlines.mayAnswer, "that request was answered")
        deadlines.receivedEnd(now: Self.start + .seconds(1))
        #expect(deadlines.waiting == .nextRequest)
        deadlines.upgrade()
        deadlines.receivedBytes(now: Self.start + .seconds(2))
        #expect(deadlines.deadline == nil)
    }

    @Test("decoder errors map to the status HTTP names; a line without a version is HTTP/0.9 (505) or not HTTP (400)")
    func refusals() {
        let get = Array("GET /x".utf8)
        #expect(ConnectionRefusal.forParseError(.headerOverflow, lineStart: Array("GET /aaaaaaaa".utf8), requestStart: get)?.status == .uriTooLong)
        #expect(
            ConnectionRefusal.forParseError(.headerOverflow, lineStart: Array("X-Big: aaaa".utf8), requestStart: get)?.status
                == .requestHeaderFieldsTooLarge)
        #expect(ConnectionRefusal.forParseError(.invalidMethod, lineStart: [], requestStart: Array("BREW /pot".utf8))?.status == .notImplemented)
        #expect(ConnectionRefusal.forParseError(.invalidMethod, lineStart: [], requestStart: [0xFF, 0x00])?.status == .badRequest)
        #expect(ConnectionRefusal.forParseError(.unexpectedContentLength, lineStart: [], requestStart: get)?.status == .badRequest)
        #expect(ConnectionRefusal.forParseError(.invalidEOFState, lineStart: [], requestStart: get) == nil)

        var http09 = RequestLineWatch()
        #expect(http09.read(ByteBuffer(string: "GET /hea")) == nil)
        #expect(http09.read(ByteBuffer(string: "lth\r\n"))?.status == .httpVersionNotSupported)
        var http11 = RequestLineWatch()
        #expect(http11.read(ByteBuffer(string: "GET /health HTTP/1")) == nil)
        #expect(http11.read(ByteBuffer(string: ".1\r\nHost: x\r\n\r\n")) == nil)
        var garbage = RequestLineWatch()
        #expect(garbage.read(ByteBuffer(bytes: [0xFF, 0xFE, 0x0A]))?.status == .badRequest)
    }
}
