import Foundation
import NIOCore
import NIOHTTP1

/// An answer the gateway's connection guard gives on its own, before or instead of the
/// application, and then closes: a request HTTP/1.1 cannot carry (400, 413, 414, 431, 501,
/// 505), a client too slow (408), or one connection too many (503).
///
/// Written as bytes straight to the socket, so it does not depend on what state the HTTP codec
/// is in after a malformed request. Each is also a `reason` of
/// `workflow_gateway_connections_closed_total`.
struct ConnectionRefusal: Equatable, Sendable {
    let status: HTTPResponseStatus
    /// The JSON error code, as the API's own errors have (`{"error": CODE, "message": WORDS}`).
    let code: String
    let message: String

    static let headerTimeout = Self(status: .requestTimeout, code: "header-timeout", message: "the request head did not arrive in time")
    static let bodyTimeout = Self(status: .requestTimeout, code: "body-timeout", message: "the request body did not arrive in time")
    static let connectionLimit = Self(
        status: .serviceUnavailable, code: "connection-limit", message: "the gateway has as many connections open as it allows")

    static func tooLarge(limit: Int) -> Self {
        Self(status: .payloadTooLarge, code: "too-large", message: "a request body is at most \(limit) bytes")
    }

    /// The answer to a request the HTTP decoder refused. `lineStart` is the first bytes of the
    /// line being read when it failed, which tells an over-long request line (414) from
    /// over-long header fields (431); `requestStart` the request's first bytes, which tell an
    /// unknown method (501) from bytes that are not HTTP at all (400). `nil`: nothing to answer
    /// (the client closed mid-request).
    static func forParseError(_ error: HTTPParserError, lineStart: [UInt8], requestStart: [UInt8]) -> Self? {
        switch error {
        case .headerOverflow:
            if RequestLine.looksLikeRequestLine(lineStart) {
                return Self(status: .uriTooLong, code: "uri-too-long", message: "the request line is too long")
            }
            return Self(
                status: .requestHeaderFieldsTooLarge, code: "headers-too-large", message: "the request's header fields are too large or too many")
        case .invalidMethod where RequestLine.startsWithMethodToken(requestStart):
            return Self(status: .notImplemented, code: "unknown-method", message: "the request method is not one this server implements")
        case .invalidVersion:
            return Self(status: .httpVersionNotSupported, code: "unsupported-version", message: "only HTTP/1.0 and HTTP/1.1 are served here")
        case .unexpectedContentLength:
            return Self(
                status: .badRequest, code: "bad-request",
                message: "the request has Content-Length together with Transfer-Encoding, or more than one Content-Length")
        case .invalidEOFState, .closedConnection:
            return nil
        default:
            return Self(status: .badRequest, code: "bad-request", message: "the request is not valid HTTP/1.1 (\(error))")
        }
    }

    /// The whole answer as bytes: status line, `Connection: close`, a JSON body.
    var bytes: ByteBuffer {
        let body = (try? JSONEncoder().encode(JSONResponses.ErrorBody(error: code, message: message))) ?? Data()
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        head += "Connection: close\r\nContent-Type: \(JSONResponses.contentType)\r\nContent-Length: \(body.count)\r\n"
        if status == .serviceUnavailable { head += "Retry-After: 1\r\n" }
        head += "\r\n"
        var buffer = ByteBuffer(string: head)
        buffer.writeBytes(body)
        return buffer
    }
}

/// The first line of a request as its bytes arrive: its first bytes (for `ConnectionRefusal`)
/// and, once it ends, whether it carries an HTTP version at all.
struct RequestLineWatch {
    /// The request's first bytes (at most 16).
    private(set) var start: [UInt8] = []
    /// The line's last bytes so far (at most 10), until it ends.
    private var tail: [UInt8] = []
    private var ended = false

    /// Reads the next bytes of the request: the refusal of a request line that ended without
    /// ` HTTP/x.y` (an HTTP/0.9 request: 505; anything else: 400), else `nil`.
    mutating func read(_ buffer: ByteBuffer) -> ConnectionRefusal? {
        guard !ended else { return nil }
        let view = buffer.readableBytesView
        start += view.prefix(16 - start.count)
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            tail = Array((tail + view).suffix(10))
            return nil
        }
        ended = true
        var line = Array((tail + view[..<newline]).suffix(10))
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.isEmpty, start.first == UInt8(ascii: "\r") || start.first == UInt8(ascii: "\n") {
            // Blank lines before a request are tolerated (RFC 9112 §2.2).
            return nil
        }
        let version = line.suffix(9)
        if version.count == 9, version.starts(with: Array(" HTTP/".utf8)) { return nil }
        if RequestLine.startsWithMethodToken(start) {
            return ConnectionRefusal(
                status: .httpVersionNotSupported, code: "unsupported-version", message: "only HTTP/1.0 and HTTP/1.1 are served here")
        }
        return ConnectionRefusal(status: .badRequest, code: "bad-request", message: "the request line is not HTTP/1.1")
    }
}

/// What the start of a line says about it, for telling a request line from a header field.
enum RequestLine {
    /// A request line starts with a method token and a space (`GET /…`); a header field with a
    /// name and a colon (`Host:`), and a name cannot hold a space nor a method a colon.
    static func looksLikeRequestLine(_ start: [UInt8]) -> Bool {
        for byte in start {
            if byte == UInt8(ascii: " ") { return true }
            if byte == UInt8(ascii: ":") { return false }
        }
        return false
    }

    /// Whether `start` opens with a method token (RFC 9110 `tchar`s) and a space.
    static func startsWithMethodToken(_ start: [UInt8]) -> Bool {
        guard let space = start.firstIndex(of: UInt8(ascii: " ")), space > 0 else { return false }
        return start[..<space].allSatisfy(isTokenCharacter)
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
