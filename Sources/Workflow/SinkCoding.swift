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
    /// (`SinkRoute.place(of:)`: the token without its render pass), so a client's token stays
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

/// Names a runtime-made sink within its host.
///
/// A token is `<node>:<slot>:<event type>@<host incarnation>.<render pass>`: it names the handler
/// of one render pass, not a position, so an event sent through a sink decoded from an earlier
/// rendering applies that rendering's closure (the rule `Sink` documents), and can never reach
/// the handler a later pass declared at the same position for another row. The part before `@`
/// (node, slot, event type) is the sink's *slot*: stable across hosts running the same build,
/// it is what a child restarted on another worker after a failover answers to for the tokens its
/// parent still holds from the lost worker (see `SinkTable`). Computed only when a sink is
/// encoded.
package enum SinkRoute {
    /// The token of a sink: `<node>:<slot>:<event type>@<incarnation in base 36>.<pass>`.
    ///
    /// Written byte by byte into one buffer: string interpolation of the five parts (each number
    /// made a `String` of its own, then appended) cost several times as much per encoded sink,
    /// once per rendering sent, for the same bytes.
    static func token<Event>(node: UInt64, slot: Int, event: Event.Type, incarnation: UInt64, pass: UInt64) -> String {
        var typeName = _typeName(event, qualified: true)
        return typeName.withUTF8 { name in
            // Three decimal UInt64s (≤ 20 digits each, a sign for the slot), one base-36 UInt64
            // (≤ 13), four separators.
            String(unsafeUninitializedCapacity: name.count + 78) { buffer in
                var at = writeDigits(of: node, radix: 10, to: buffer, at: 0)
                buffer[at] = UInt8(ascii: ":")
                at += 1
                if slot < 0 {
                    buffer[at] = UInt8(ascii: "-")
                    at += 1
                }
                at = writeDigits(of: UInt64(slot.magnitude), radix: 10, to: buffer, at: at)
                buffer[at] = UInt8(ascii: ":")
                at += 1
                for byte in name {
                    buffer[at] = byte
                    at += 1
                }
                buffer[at] = UInt8(ascii: "@")
                at = writeDigits(of: incarnation, radix: 36, to: buffer, at: at + 1)
                buffer[at] = UInt8(ascii: ".")
                return writeDigits(of: pass, radix: 10, to: buffer, at: at + 1)
            }
        }
    }

    /// Writes `value`'s digits in `radix` (lowercase letters past 9, as `String(_:radix:)`)
    /// from `start`; returns the index after the last.
    private static func writeDigits(of value: UInt64, radix: UInt64, to buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var count = 1
        var rest = value / radix
        while rest > 0 {
            count += 1
            rest /= radix
        }
        var value = value
        var index = start + count
        repeat {
            index -= 1
            let digit = UInt8(truncatingIfNeeded: value % radix)
            buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            value /= radix
        } while value > 0
        return start + count
    }

    /// What `Sink.inert` encodes as: no runtime token is empty.
    static let inertToken = ""

    /// The token of a sink's place: `token` without its render pass (`…@<incarnation>`), the
    /// same for every pass's sink at that place. A token of another shape (a middle process's
    /// forwarded token ends with its carried token's pass, which is dropped the same way) is
    /// returned whole when it ends with no pass.
    package static func place(of token: String) -> String {
        let utf8 = token.utf8
        guard let at = utf8.lastIndex(of: UInt8(ascii: "@")),
            let dot = utf8[utf8.index(after: at)...].lastIndex(of: UInt8(ascii: "."))
        else { return token }
        return String(token[..<dot])
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
        if token == SinkRoute.inertToken {
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
        if token == SinkRoute.inertToken {
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
