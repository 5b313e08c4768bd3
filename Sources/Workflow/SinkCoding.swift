/// How sinks cross process boundaries.
///
/// A rendering made in one process may be decoded in another (a remote child's rendering in its
/// parent's process). Its sinks then have to call back across the wire. `Sink` is `Codable` when
/// its value is: encoding writes a token naming the sink's route, through a `SinkExporter` the
/// remote runtime puts in the encoder's `userInfo`; decoding turns the token back into a sink,
/// through a `SinkImporter` in the decoder's `userInfo`, that sends each value over the wire. A
/// child workflow therefore puts plain `Sink`s in its rendering and runs unchanged locally or
/// remotely. Without an exporter or importer (plain JSON), coding a sink fails with a clear error.
extension CodingUserInfoKey {
    /// The `SinkExporter` an encoder uses to encode sinks.
    public static let workflowSinkExporter = CodingUserInfoKey(rawValue: "workflow.sinkExporter")!
    /// The `SinkImporter` a decoder uses to decode sinks.
    public static let workflowSinkImporter = CodingUserInfoKey(rawValue: "workflow.sinkImporter")!
}

/// Registers sinks being encoded, so the events later sent to their tokens reach them.
public protocol SinkExporter: Sendable {
    /// Records that `token` delivers to `deliver`, which decodes an event and sends it to the
    /// sink. The same sink always gets the same token, so re-registration replaces.
    func export(token: String, deliver: @escaping @Sendable (any Decoder) throws -> Void)

    /// Like `export(token:deliver:)`, but `deliver` also says whether the sink accepted the event
    /// (`false`: refused for back-pressure), for an exporter that must report refusals to its
    /// caller (the cluster's event-by-token API). The default forwards to
    /// `export(token:deliver:)`, dropping the answer.
    func export(token: String, deliverReportingAcceptance deliver: @escaping @Sendable (any Decoder) throws -> Bool)

    /// Whether a sink nothing can route to (made from a closure, as placeholder renderings do)
    /// encodes as `null` instead of failing the whole encoding. `false` by default: a rendering
    /// sent to another process must not silently lose a handler; an exporter that only shows a
    /// rendering (JSON for a client) says `true`.
    var encodesUnroutableSinksAsNull: Bool { get }
}

extension SinkExporter {
    /// Forwards to `export(token:deliver:)`: an exporter that does not report refusals drops the
    /// sink's answer.
    public func export(token: String, deliverReportingAcceptance deliver: @escaping @Sendable (any Decoder) throws -> Bool) {
        export(token: token) { decoder in _ = try deliver(decoder) }
    }

    /// `false`: by default an unroutable sink fails the encoding.
    public var encodesUnroutableSinksAsNull: Bool { false }
}

/// Makes the sending side of sinks decoded from another process.
public protocol SinkImporter: Sendable {
    /// A function that sends an event to the sink named `token` in the process that encoded it,
    /// returning `false` when the event is refused for back-pressure.
    func importSink(token: String) -> @Sendable (any Encodable & Sendable) -> Bool

    /// A token unique in this process for the imported sink `token`, so a process in the middle
    /// of a three-process tree can pass a decoded sink on in its own rendering.
    func localToken(for token: String) -> String
}

/// Why a sink could not be encoded or decoded.
public enum SinkCodingError: Error, CustomStringConvertible {
    /// The sink was made from a closure, not by a `RenderContext`, so nothing can route to it.
    case unroutableSink
    /// The coder has no exporter/importer: the rendering is not being sent by a remote runtime.
    case noTransport

    public var description: String {
        switch self {
        case .unroutableSink:
            "only sinks made by a RenderContext (makeSink, makeOutputSink) can be sent to another process"
        case .noTransport:
            "a Sink can only be encoded or decoded by the remote runtime (no sink exporter/importer in userInfo)"
        }
    }
}

/// Names a runtime-made sink within its host.
enum SinkRoute {
    /// The node's id, the sink's event type name and its position among the node's sinks of
    /// that event type in the pass: stable across processes running the same build (unlike
    /// type identities), so a child restarted on another worker after a failover still answers
    /// to the tokens its parent holds. Computed only when a sink is encoded.
    static func token<Event>(node: UInt64, event: Event.Type, ordinal: Int) -> String {
        "\(node):\(_typeName(event, qualified: true)):\(ordinal)"
    }
}

extension Sink: Codable where Value: Codable {
    public func encode(to encoder: any Encoder) throws {
        let exporter = encoder.userInfo[.workflowSinkExporter] as? any SinkExporter
        guard let token = exportToken?() else {
            guard exporter?.encodesUnroutableSinksAsNull == true else { throw SinkCodingError.unroutableSink }
            var container = encoder.singleValueContainer()
            try container.encodeNil()
            return
        }
        guard let exporter else { throw SinkCodingError.noTransport }
        let sink = self
        exporter.export(token: token, deliverReportingAcceptance: { decoder in sink.send(try Value(from: decoder)) })
        var container = encoder.singleValueContainer()
        try container.encode(token)
    }

    public init(from decoder: any Decoder) throws {
        guard let importer = decoder.userInfo[.workflowSinkImporter] as? any SinkImporter else {
            throw SinkCodingError.noTransport
        }
        let token = try decoder.singleValueContainer().decode(String.self)
        let send = importer.importSink(token: token)
        let localToken = importer.localToken(for: token)
        self.init(exportToken: { localToken }, accepting: { send($0) })
    }
}
