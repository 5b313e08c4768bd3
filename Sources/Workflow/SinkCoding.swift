/// How sinks cross process boundaries.
///
/// A rendering made in one process may be decoded in another (a remote child's rendering in its
/// parent's process). Its sinks then have to call back across the wire. `Sink` is `Codable` when
/// its value is: encoding writes a token naming the sink's route, through a `SinkExporter` the
/// remote runtime puts in the encoder's `userInfo`; decoding turns the token back into a sink,
/// through a `SinkImporter` in the decoder's `userInfo`, that sends each value over the wire. A
/// child workflow therefore puts plain `Sink`s in its rendering and runs unchanged locally or
/// remotely. Without an exporter or importer (plain JSON), coding a sink fails with a clear error,
/// except for `Sink.inert`, which routes nowhere and encodes anywhere.
extension CodingUserInfoKey {
    /// The `SinkExporter` an encoder uses to encode sinks.
    public static let workflowSinkExporter = CodingUserInfoKey(rawValue: "workflow.sinkExporter")!
    /// The `SinkImporter` a decoder uses to decode sinks.
    public static let workflowSinkImporter = CodingUserInfoKey(rawValue: "workflow.sinkImporter")!
}

/// Registers sinks being encoded, so the events later sent to their tokens reach them.
public protocol SinkExporter: Sendable {
    /// Records that `token` delivers to `deliver`, which decodes an event and sends it to the
    /// sink. The same sink always gets the same token, so re-registration replaces; each render
    /// pass makes new sinks with new tokens, so an exporter keeps the tokens of recent renderings
    /// (a screen still shown may send through them) and may forget older ones.
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

    /// The name a sink is written (and exported) under, given its render pass's token. By
    /// default the token itself: a rendering sent to another process names each pass's handler,
    /// so a sink held from an earlier rendering applies its own closure there as it would in
    /// process. An exporter that shows renderings to clients names a sink by its *place*
    /// (`SinkToken.place(of:)`: the token without its render pass), so a client's token stays
    /// the same while its sink is rendered at the same place and reaches the latest rendering's
    /// sink there; and it may mark the tree the name belongs to, so a name of one tree is
    /// unknown in another.
    func name(forToken token: String) -> String
}

extension SinkExporter {
    /// Forwards to `export(token:deliver:)`: an exporter that does not report refusals drops the
    /// sink's answer.
    public func export(token: String, deliverReportingAcceptance deliver: @escaping @Sendable (any Decoder) throws -> Bool) {
        export(token: token) { decoder in _ = try deliver(decoder) }
    }

    /// `false`: by default an unroutable sink fails the encoding.
    public var encodesUnroutableSinksAsNull: Bool { false }

    /// By default a sink is written under its render pass's token.
    public func name(forToken token: String) -> String { token }
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

/// A `SinkExporter` or `SinkImporter` as the remote runtime puts it in a coder's `userInfo`.
///
/// A sink finds its exporter (importer) in `userInfo`, an `[CodingUserInfoKey: Any]`, once per
/// encoded (decoded) sink: a cast of that `Any` to `any SinkExporter` searches the protocol
/// conformances (once per rendering on each side of a remote round trip), a cast to this
/// concrete type compares one metadata pointer. A plain exporter or importer in
/// `userInfo` (as the cluster's JSON sessions put there) still works, through the slower cast.
@_spi(WorkflowRuntime) public struct SinkTransport<Transport: Sendable>: Sendable {
    /// The exporter or importer.
    public let transport: Transport

    /// Wraps `transport` for a coder's `userInfo`.
    public init(_ transport: Transport) {
        self.transport = transport
    }
}

extension [CodingUserInfoKey: Any] {
    /// The value at `key`: a `SinkTransport<T>` (the runtime's, a cheap cast) or a plain `T`.
    fileprivate func sinkTransport<T: Sendable>(_ key: CodingUserInfoKey, as type: T.Type) -> T? {
        guard let value = self[key] else { return nil }
        if let wrapped = value as? SinkTransport<T> { return wrapped.transport }
        return value as? T
    }
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

extension Sink: Codable where Value: Codable {
    public func encode(to encoder: any Encoder) throws {
        let exporter = encoder.userInfo.sinkTransport(.workflowSinkExporter, as: (any SinkExporter).self)
        var container = encoder.singleValueContainer()
        guard let token = exportToken?() else {
            guard exporter?.encodesUnroutableSinksAsNull == true else { throw SinkCodingError.unroutableSink }
            try container.encodeNil()
            return
        }
        if token == SinkToken.inert {
            // Routes nowhere, so it needs no exporter: any encoder can write it. A rendering
            // shown to a client writes it as `null`, like any sink nothing can be sent to.
            if exporter?.encodesUnroutableSinksAsNull == true {
                try container.encodeNil()
            } else {
                try container.encode(token)
            }
            return
        }
        guard let exporter else { throw SinkCodingError.noTransport }
        let sink = self
        let name = exporter.name(forToken: token)
        exporter.export(token: name, deliverReportingAcceptance: { decoder in sink.send(try Value(from: decoder)) })
        try container.encode(name)
    }

    public init(from decoder: any Decoder) throws {
        let token = try decoder.singleValueContainer().decode(String.self)
        if token == SinkToken.inert {
            self = .inert
            return
        }
        guard let importer = decoder.userInfo.sinkTransport(.workflowSinkImporter, as: (any SinkImporter).self) else {
            throw SinkCodingError.noTransport
        }
        let send = importer.importSink(token: token)
        // Made only if this process encodes the sink again (it is the middle of a tree of three
        // processes): a parent that only shows the rendering never needs it, and building it
        // for every decoded sink cost a string per remote child and rendering.
        self.init(exportToken: { importer.localToken(for: token) }, accepting: { send($0) })
    }
}
