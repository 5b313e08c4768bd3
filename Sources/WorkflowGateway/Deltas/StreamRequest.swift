import Hummingbird

/// What a client asks of a rendering stream, in its URL's query (a browser's WebSocket cannot
/// send headers): `deltas=1` to receive changes after a first whole frame (`JSONDelta.version`;
/// another version, or none, gets whole frames), and `since=N&run=R`, the sequence it applied
/// last and the stream it came from (the `run` of its whole frame), to resume with only the
/// changes after it.
struct StreamRequest: Sendable, Equatable {
    /// The delta version the stream speaks to this client; `nil`: whole frames only.
    var deltas: Int?
    /// The sequence the client says it applied last (with deltas only).
    var since: UInt64?
    /// The stream the client's frames came from (`RenderingFeed.run`): it resumes only there
    /// (a coordinator restarted without a store numbers its renderings from 1 again).
    var run: String?

    /// Whole frames, from the latest.
    init() {}

    /// Reads the request's query; throws in words when a value is not a number.
    init(_ request: Request) throws(StreamRequestError) {
        try self.init(query: request.uri.queryParameters)
    }

    init(query: Parameters) throws(StreamRequestError) {
        if let text = query["deltas"] {
            guard let version = Int(text), version >= 0 else {
                throw StreamRequestError(code: "bad-stream-request", message: "deltas=\(text.prefix(40)): expected the delta version, deltas=\(JSONDelta.version)")
            }
            deltas = version == JSONDelta.version ? version : nil
        }
        if let text = query["since"] {
            guard let sequence = UInt64(text) else {
                throw StreamRequestError(code: "bad-stream-request", message: "since=\(text.prefix(40)): expected the last sequence the client applied, a whole number")
            }
            since = deltas == nil ? nil : sequence
        }
        if let text = query["run"] {
            guard text.utf8.count <= 64 else {
                throw StreamRequestError(code: "bad-stream-request", message: "run=\(text.prefix(40))…: expected the run of the stream's whole frame")
            }
            run = deltas == nil ? nil : String(text)
        }
    }
}

/// A stream request or a client's message on the stream that is not as docs/WIRE-PROTOCOL.md
/// says: the request is answered 400, the stream closed with the words (others keep theirs).
struct StreamRequestError: Error, Sendable, Equatable, HTTPResponseError {
    var code: String
    var message: String

    var status: HTTPResponse.Status { .badRequest }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponses.error(status, code: code, message: message)
    }

    /// The close frame's reason: the code and the words, within its 123 bytes.
    var closeReason: String {
        var reason = code + ": " + message
        while reason.utf8.count > 123 { reason.removeLast() }
        return reason
    }
}
