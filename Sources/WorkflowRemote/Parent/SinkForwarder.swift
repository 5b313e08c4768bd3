import Synchronization
import Tracing
import WireProtocol
import Workflow

/// The parent side: sinks decoded from a remote child's rendering send their events to the
/// child's worker through the runtime.
///
/// A class: every sink decoded looks it up in the decoder's `userInfo` as `any SinkImporter`, and
/// a struct this large would be boxed for that cast (an allocation per decoded sink).
final class SinkForwarder: SinkImporter {
    /// Names the remote child in the tokens this process passes on (`prefix(scope:path:)`).
    let prefix: String
    /// Sends an event's token and bytes, with the sender's trace context when traced.
    let send: @Sendable (String, [UInt8], ServiceContext?) -> Void
    let codec: any WireCodec
    /// The child's back-pressure account, shared with its proxy.
    let outstanding: OutstandingEvents
    /// The runtime's tracer: with one, each event takes the sender's current trace context
    /// along (the sender's task or thread is where that context is bound); `nil`: nothing is read.
    let tracer: (any Tracer)?

    init(
        prefix: String, send: @escaping @Sendable (String, [UInt8], ServiceContext?) -> Void, codec: any WireCodec,
        outstanding: OutstandingEvents, tracer: (any Tracer)? = nil
    ) {
        self.prefix = prefix
        self.send = send
        self.codec = codec
        self.outstanding = outstanding
        self.tracer = tracer
    }

    func localToken(for token: String) -> String {
        SinkToken.forwarding(token, prefix: prefix)
    }

    /// The prefix for the remote child at `path` in a host that sits at `scope` in the whole
    /// tree: `f` and a 64-bit FNV-1a hash of both, in base 36.
    ///
    /// It is derived from where the child is rather than from anything a process allocates, so
    /// it is the same in every process and in every restart: when this process's hosted child
    /// restarts (here after a failover, or in another worker), the tokens its parent still holds
    /// from before name the same remote child, and `ParentDriver.forwardingRoute(for:)` finds it.
    /// The scope keeps two hosted children of the same type on one worker apart; the hash keeps
    /// tokens short (a path can be long and is repeated in every sink of a rendering).
    static func prefix(scope: String, path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in scope.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0) &* 0x100_0000_01b3
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "f" + String(hash, radix: 36)
    }

    func importSink(token: String) -> @Sendable (any Encodable & Sendable) -> Bool {
        let send = self.send
        let codec = self.codec
        let outstanding = self.outstanding
        let traced = tracer != nil
        return { event in
            guard outstanding.reserve() else { return false }
            // Encoding happens on the caller's thread; only the bytes hop to the loop. The
            // existential is opened, so the codec sees the event's own type (an `Int` is written
            // directly) rather than a box it must encode through a container.
            guard let bytes = try? encodeOpened(event, with: codec) else {
                outstanding.release(1)
                return false
            }
            // The caller's context, read only when tracing: an event sent outside any span has none.
            send(token, bytes, traced ? ServiceContext.current : nil)
            return true
        }
    }
}

/// Encodes an event with its concrete type: called with an `any Encodable`, Swift opens the
/// existential and `T` is the event's own type.
private func encodeOpened<T: Encodable>(_ event: T, with codec: any WireCodec) throws(WireError) -> [UInt8] {
    try codec.encode(event)
}
