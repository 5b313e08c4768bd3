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
/// (node, position, event type), the handler the restored child declares for it.
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
    func deliver(token: String, bytes: UnsafeRawBufferPointer, codec: any WireCodec) -> Bool {
        guard let route = route(for: token) else { return false }
        return deliver(bytes: bytes, via: route, codec: codec)
    }

    /// Where events for `token` go, looked up once for a batch of events naming it (the table
    /// changes only when the child renders, which it does not between the events of a batch);
    /// `nil` for a token this table does not (or no longer) know.
    func route(for token: String) -> ResolvedToken? {
        table.withLock { $0.resolve(token) }.map { ResolvedToken(deliver: $0) }
    }

    /// Decodes `bytes` as an event for `route`'s sink and sends it; `false` if it does not decode.
    /// The codec hands the sink's closure its decoder directly (`decode(from:through:)`).
    func deliver(bytes: UnsafeRawBufferPointer, via route: ResolvedToken, codec: any WireCodec) -> Bool {
        do {
            try codec.decode(from: bytes, through: route.deliver)
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
            if let stamp = Stamp(token) { latestBySlot[stamp.slot] = token }
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
            if let stamp = Stamp(token), latestBySlot[stamp.slot] == token { latestBySlot[stamp.slot] = nil }
        }

        func resolve(_ token: String) -> (@Sendable (any Decoder) throws -> Void)? {
            if let entry = entries[token] { return entry.deliver }
            guard let stamp = Stamp(token), let latest = latestBySlot[stamp.slot], let current = Stamp(latest),
                current.incarnation != stamp.incarnation
            else { return nil }
            return entries[latest]?.deliver
        }
    }

    /// The parts of a runtime token (`<slot>@<incarnation>.<pass>`, see `SinkRoute` in the core) the table
    /// reads. A middle process's tokens (`f<prefix>~<token>`, see `SinkForwarder`) parse the same
    /// way: their slot is the prefix with the carried token's slot, their incarnation the carried
    /// token's.
    private struct Stamp {
        let slot: Substring
        let incarnation: Substring

        /// Scans the UTF-8 bytes: the separators are ASCII, and a search by `Character` (grapheme
        /// breaking over the whole token) was costly, once per rendered sink.
        /// Over the contiguous bytes when the string has them (a native string does): the
        /// generic `UTF8View` search costs more per exported sink.
        init?(_ token: String) {
            let utf8 = token.utf8
            let offsets = utf8.withContiguousStorageIfAvailable { bytes -> (at: Int, dot: Int)? in
                guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return nil }
                return (at, bytes[(at + 1)...].firstIndex(of: UInt8(ascii: ".")) ?? bytes.count)
            }
            let at: String.Index
            let end: String.Index
            if let offsets {
                guard let offsets else { return nil }
                at = utf8.index(utf8.startIndex, offsetBy: offsets.at)
                end = utf8.index(utf8.startIndex, offsetBy: offsets.dot)
            } else {
                guard let found = utf8.lastIndex(of: UInt8(ascii: "@")) else { return nil }
                at = found
                end = utf8[utf8.index(after: found)...].firstIndex(of: UInt8(ascii: ".")) ?? utf8.endIndex
            }
            slot = token[..<at]
            incarnation = token[utf8.index(after: at)..<end]
        }
    }
}
