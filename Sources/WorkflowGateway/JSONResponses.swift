import Foundation
import Hummingbird
import NIOCore
import Workflow

/// Builds the gateway's JSON answers: bodies are bytes already encoded (renderings) or small
/// objects encoded with sorted keys, so equal answers are equal bytes.
enum JSONResponses {
    static let contentType = "application/json; charset=utf-8"

    /// A response whose body is `bytes`, as JSON (not stored by caches unless `headers` says
    /// otherwise).
    static func bytes(_ bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        if fields[.cacheControl] == nil { fields[.cacheControl] = "no-store" }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: Array(bytes))))
    }

    /// A response whose body is `value` encoded as JSON (keys sorted).
    static func encoded(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = (try? encoder.encode(value)) ?? Data(#"{"error":"internal","message":"the answer does not encode"}"#.utf8)
        return bytes(data, status: status, headers: headers)
    }

    /// The JSON error every failing API route answers with: `{"error": CODE, "message": WORDS}`.
    static func error(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) -> Response {
        encoded(ErrorBody(error: code, message: message), status: status, headers: headers)
    }

    struct ErrorBody: Codable, Sendable {
        var error: String
        var message: String
    }
}

/// One settled rendering as a client receives it, from `GET /api/rendering` and from each
/// message of the `/api/renderings` stream:
/// `{"children": [STATUS…], "rendering": …, "root": NAME, "sequence": N}`, where each status is a
/// remote child's (`ChildStatusJSON`).
///
/// Built by splicing the session's bytes (already JSON, tokens included) into a small envelope,
/// so a rendering is encoded once however many clients read it.
enum RenderingMessage {
    /// The message; with `deltas`, it also says the delta version the stream speaks to this
    /// client (`"deltas": 1`: the messages after it may be changes), the stream's run (what it
    /// resumes from) and its window (how many messages the client may leave unacknowledged).
    static func bytes(
        root: String, sequence: UInt64, json: Data, children: [ChildStatusJSON], deltas: (version: Int, run: String, window: Int)? = nil
    )
        -> [UInt8]
    {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + root.utf8.count + 64 + children.count * 128)
        out += Array(#"{"children":"#.utf8)
        out += childrenBytes(children)
        if let deltas { out += Array(#","deltas":\#(deltas.version)"#.utf8) }
        out += Array(#","rendering":"#.utf8)
        out += json.isEmpty ? Array("null".utf8) : Array(json)
        out += Array(#","root":"#.utf8)
        JSONText.appendQuoted(root, escapingSlashes: true, to: &out)
        if let deltas {
            out += Array(#","run":"#.utf8)
            JSONText.appendQuoted(deltas.run, escapingSlashes: true, to: &out)
        }
        out += Array(#","sequence":\#(sequence)"#.utf8)
        if let deltas { out += Array(#","window":\#(deltas.window)"#.utf8) }
        out += Array("}".utf8)
        return out
    }

    /// The children's statuses as a JSON array, as `JSONEncoder` writes it with sorted keys and
    /// `/` unescaped, written directly: it goes into every message of every stream.
    static func childrenBytes(_ children: [ChildStatusJSON]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, child) in children.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"detail":"#.utf8)
            JSONText.appendQuoted(child.detail, escapingSlashes: false, to: &out)
            out += Array(#","path":"#.utf8)
            JSONText.appendQuoted(child.path, escapingSlashes: false, to: &out)
            out += Array(#","status":"#.utf8)
            JSONText.appendQuoted(child.status, escapingSlashes: false, to: &out)
            out += Array(#","type":"#.utf8)
            JSONText.appendQuoted(child.type, escapingSlashes: false, to: &out)
            if let worker = child.worker {
                out += Array(#","worker":"#.utf8)
                JSONText.appendQuoted(worker, escapingSlashes: false, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

/// Whether a `Content-Type` names JSON: `application/json` or a `+json` type, any parameters
/// (`; charset=utf-8`), any case.
///
/// Read on every event's request, so it compares the header's bytes in place: Foundation's
/// trimming and lowercasing cost about 1.5 % of a coordinator's time under session events.
enum JSONMediaType {
    static func matches(_ contentType: String?) -> Bool {
        guard var contentType else { return false }
        return contentType.withUTF8 { bytes in
            var type = bytes[...]
            if let semicolon = type.firstIndex(of: UInt8(ascii: ";")) { type = type[..<semicolon] }
            while let first = type.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { type = type.dropFirst() }
            while let last = type.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { type = type.dropLast() }
            if equalsIgnoringCase(type, "application/json") { return true }
            let prefix = "application/".utf8.count
            let suffix = "+json".utf8.count
            return type.count > prefix + suffix && equalsIgnoringCase(type.prefix(prefix), "application/")
                && equalsIgnoringCase(type.suffix(suffix), "+json")
        }
    }

    /// Whether `bytes` spell `lowercase` in any case (ASCII).
    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return zip(bytes, UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)).allSatisfy { byte, expected in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == expected
        }
    }
}

/// The answer to a plain GET of the rendering stream: 426 with `Upgrade: websocket`.
struct UpgradeRequired: HTTPResponseError {
    var status: HTTPResponse.Status { .upgradeRequired }
    var headers: HTTPFields { [.upgrade: "websocket", .connection: "Upgrade"] }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponses.error(
            status, code: "upgrade-required", message: "this path is a WebSocket: connect with Upgrade: websocket", headers: headers)
    }
}
