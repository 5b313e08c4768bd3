import Synchronization
import WireProtocol
import Workflow

/// The worker side of sinks that crossed the wire: token → how to deliver an event to the sink.
///
/// Filled while a hosted child's rendering is encoded (`SinkExporter`), read when an EVENT
/// arrives. Tokens are stable per sink, so each rendering replaces rather than grows the table.
final class SinkTable: SinkExporter {
    private let deliveries = Mutex<[String: @Sendable (any Decoder) throws -> Void]>([:])

    func export(token: String, deliver: @escaping @Sendable (any Decoder) throws -> Void) {
        deliveries.withLock { $0[token] = deliver }
    }

    /// Decodes `bytes` as the event of the sink named `token` and sends it. Returns `false` for
    /// an unknown token (a stale handler), which the caller drops.
    func deliver(token: String, bytes: UnsafeRawBufferPointer, codec: any WireCodec) -> Bool {
        guard let deliver = deliveries.withLock({ $0[token] }) else { return false }
        do {
            _ = try codec.decode(EventDelivery.self, from: bytes, userInfo: [EventDelivery.key: DeliveryBox(deliver: deliver)])
            return true
        } catch {
            return false
        }
    }
}

/// Hands the codec's `Decoder` to a sink's delivery closure: decoding this type *is* delivering.
private struct EventDelivery: Decodable {
    static let key = CodingUserInfoKey(rawValue: "workflow.remote.eventDelivery")!

    init(from decoder: any Decoder) throws {
        guard let box = decoder.userInfo[Self.key] as? DeliveryBox else {
            throw SinkCodingError.noTransport
        }
        try box.deliver(decoder)
    }
}

private struct DeliveryBox: Sendable {
    let deliver: @Sendable (any Decoder) throws -> Void
}

/// The parent side: sinks decoded from a remote child's rendering send their events to the
/// child's worker through the runtime.
struct SinkForwarder: SinkImporter {
    /// Unique per remote child in this process.
    let prefix: String
    let send: @Sendable (String, [UInt8]) -> Void
    let codec: any WireCodec
    /// The child's back-pressure account, shared with its proxy.
    let outstanding: OutstandingEvents

    func localToken(for token: String) -> String {
        "\(prefix)~\(token)"
    }

    func importSink(token: String) -> @Sendable (any Encodable & Sendable) -> Bool {
        let send = self.send
        let codec = self.codec
        let outstanding = self.outstanding
        return { event in
            guard outstanding.reserve() else { return false }
            // Encoding happens on the caller's thread; only the bytes hop to the loop.
            guard let bytes = try? codec.encode(AnyEncodable(event)) else {
                outstanding.release(1)
                return false
            }
            send(token, bytes)
            return true
        }
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
