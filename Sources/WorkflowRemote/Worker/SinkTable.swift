import Synchronization
import WireProtocol
import Workflow

/// The worker side of sinks that crossed the wire: token → how to deliver an event to the sink.
///
/// Filled while a hosted child's rendering is encoded (`SinkExporter`), read when an EVENT
/// arrives. A token names the handler of one render pass (its token), so an event sent through
/// a sink the parent decoded from an older rendering reaches that rendering's handler, which
/// applies its own closure, exactly like a stale sink in one process; it never reaches the
/// handler a later pass declared at the same position for another row.
///
/// Every rendering exports new tokens, so the table keeps the most recent `capacity` exported
/// sinks and forgets the oldest beyond that; an event for a forgotten token is dropped (never
/// re-routed by position). The one exception is a token of another *incarnation* of the child
/// (a sink the parent decoded from a worker it has since lost, or an event replayed after a
/// failover): this host never made it, so it goes to this host's latest sink in the same slot
/// (`SinkToken.route`: node, position, event type), the handler the restored child declares for
/// it. A middle process's forwarded tokens parse the same way (`SinkToken`).
final class SinkTable: SinkExporter {
    /// How many exported sinks stay deliverable by default: room for thousands of renderings of a
    /// small screen (a parent may keep sending through a sink it decoded long ago), bounded so a
    /// long-lived child does not grow without end.
    static let defaultCapacity = 32_768

    private let table: Mutex<Table>

    init(capacity: Int = SinkTable.defaultCapacity) {
        table = Mutex(Table(capacity: capacity))
    }

    func export(token: String, deliver: @escaping @Sendable (any Decoder) throws -> Void) {
        table.withLock { $0.insert(token: token, deliver: deliver) }
    }

    /// Decodes `bytes` as the event of the sink named `token` and sends it. Returns `false` for
    /// a token this table does not (or no longer) know, which the caller drops.
    func deliver(token: String, bytes: UnsafeRawBufferPointer, codec: any WireCodec, reusing scratch: WireCodingScratch) -> Bool {
        guard let route = route(for: token) else { return false }
        return deliver(bytes: bytes, via: route, codec: codec, reusing: scratch)
    }

    /// Where events for `token` go, looked up once for a batch of events naming it (the table
    /// changes only when the child renders, which it does not between the events of a batch);
    /// `nil` for a token this table does not (or no longer) know.
    func route(for token: String) -> ResolvedToken? {
        table.withLock { $0.resolve(token) }.map { ResolvedToken(deliver: $0) }
    }

    /// Decodes `bytes` as an event for `route`'s sink and sends it; `false` if it does not decode.
    /// The codec hands the sink's closure its decoder directly (`decode(from:through:reusing:)`),
    /// `scratch`'s: the caller's thread's, so an event costs no decoder of its own.
    func deliver(bytes: UnsafeRawBufferPointer, via route: ResolvedToken, codec: any WireCodec, reusing scratch: WireCodingScratch) -> Bool {
        do {
            try codec.decode(from: bytes, through: route.deliver, reusing: scratch)
            return true
        } catch {
            return false
        }
    }

    /// A resolved token: the closure that decodes an event and sends it to the sink.
    struct ResolvedToken {
        fileprivate let deliver: @Sendable (any Decoder) throws -> Void
    }

    /// The table behind the lock: entries, their export order (for forgetting the oldest) and the
    /// latest token of each slot (for tokens of another incarnation).
    private struct Table {
        struct Entry {
            let serial: UInt64
            let deliver: @Sendable (any Decoder) throws -> Void
        }

        let capacity: Int
        var entries: [String: Entry] = [:]
        /// Export records, oldest first from `head`; a record whose serial is no longer its
        /// token's (the token was exported again since) is garbage.
        var order: [(token: String, serial: UInt64)] = []
        var head = 0
        var latestBySlot: [Substring: String] = [:]
        var serial: UInt64 = 0

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        mutating func insert(token: String, deliver: @escaping @Sendable (any Decoder) throws -> Void) {
            serial += 1
            entries[token] = Entry(serial: serial, deliver: deliver)
            order.append((token, serial))
            if let parts = SinkToken(parsing: token) { latestBySlot[parts.route] = token }
            while entries.count > capacity, head < order.count {
                let record = order[head]
                head += 1
                if entries[record.token]?.serial == record.serial { forget(record.token) }
            }
            if order.count - head > 2 * capacity {
                // Mostly re-exports of the same tokens: keep only the live records.
                order = order[head...].filter { entries[$0.token]?.serial == $0.serial }
                head = 0
            } else if head > 1024, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
        }

        private mutating func forget(_ token: String) {
            entries[token] = nil
            if let parts = SinkToken(parsing: token), latestBySlot[parts.route] == token { latestBySlot[parts.route] = nil }
        }

        func resolve(_ token: String) -> (@Sendable (any Decoder) throws -> Void)? {
            if let entry = entries[token] { return entry.deliver }
            guard let parts = SinkToken(parsing: token), let latest = latestBySlot[parts.route], let current = SinkToken(parsing: latest),
                current.incarnation != parts.incarnation
            else { return nil }
            return entries[latest]?.deliver
        }
    }
}
