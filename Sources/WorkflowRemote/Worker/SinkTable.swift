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
        table.withLock { $0.insert(token: token, deliver: .plain(deliver)) }
    }

    /// Keeps `deliver` as it is, its answer dropped when the event is sent: the protocol's default
    /// wrapped it in a closure of its own, an allocation for every sink of every rendering.
    func export(token: String, deliverReportingAcceptance deliver: @escaping @Sendable (any Decoder) throws -> Bool) {
        table.withLock { $0.insert(token: token, deliver: .reporting(deliver)) }
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
    /// A reporting sink's answer is dropped here, in the one closure made per resolved batch.
    func route(for token: String) -> ResolvedToken? {
        switch table.withLock({ $0.resolve(token) }) {
        case .plain(let deliver): ResolvedToken(deliver: deliver)
        case .reporting(let deliver): ResolvedToken(deliver: { _ = try deliver($0) })
        case nil: nil
        }
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

    /// How an exported sink takes an event: the closure it was exported with, as it was given.
    fileprivate enum Delivery {
        case plain(@Sendable (any Decoder) throws -> Void)
        /// A sink that also says whether it accepted the event (the table drops the answer).
        case reporting(@Sendable (any Decoder) throws -> Bool)
    }

    /// The table behind the lock: entries, their export order (for forgetting the oldest) and the
    /// latest token of each slot (for tokens of another incarnation).
    ///
    /// The slots are indexed lazily: an export only appends its record, and the records exported
    /// since the last index are parsed (`SinkToken(parsing:)`) when a token this table does not
    /// hold is resolved, which only a token of another incarnation (or an unknown one) is. Parsing
    /// and indexing every export cost about a third of a sink's export, for every sink of every
    /// rendering, to serve the rare event replayed after a failover.
    private struct Table {
        struct Entry {
            let serial: UInt64
            let deliver: Delivery
        }

        let capacity: Int
        var entries: [String: Entry] = [:]
        /// Export records, oldest first from `head`; a record whose serial is no longer its
        /// token's (the token was exported again since) is garbage.
        var order: [(token: String, serial: UInt64)] = []
        var head = 0
        /// The latest live token of each slot among the exports up to `indexedSerial`.
        var latestBySlot: [Substring: String] = [:]
        var indexedSerial: UInt64 = 0
        var serial: UInt64 = 0

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        mutating func insert(token: String, deliver: Delivery) {
            serial += 1
            entries[token] = Entry(serial: serial, deliver: deliver)
            order.append((token, serial))
            while entries.count > capacity, head < order.count {
                let record = order[head]
                head += 1
                if entries[record.token]?.serial == record.serial { forget(record) }
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

        /// Forgets a live record's token; its slot's index entry too if the slot is indexed
        /// (a record exported after `indexedSerial` is in no index entry yet).
        private mutating func forget(_ record: (token: String, serial: UInt64)) {
            entries[record.token] = nil
            guard !latestBySlot.isEmpty, let parts = SinkToken(parsing: record.token), latestBySlot[parts.route] == record.token else { return }
            latestBySlot[parts.route] = nil
        }

        /// Indexes the slots of the live records exported since the last index, oldest first, so
        /// each slot ends at its latest.
        private mutating func indexSlots() {
            guard indexedSerial < serial else { return }
            var first = order.count
            while first > head, order[first - 1].serial > indexedSerial { first -= 1 }
            for record in order[first...] where entries[record.token]?.serial == record.serial {
                if let parts = SinkToken(parsing: record.token) { latestBySlot[parts.route] = record.token }
            }
            indexedSerial = serial
        }

        mutating func resolve(_ token: String) -> Delivery? {
            if let entry = entries[token] { return entry.deliver }
            guard let parts = SinkToken(parsing: token) else { return nil }
            indexSlots()
            guard let latest = latestBySlot[parts.route], let current = SinkToken(parsing: latest), current.incarnation != parts.incarnation
            else { return nil }
            return entries[latest]?.deliver
        }
    }
}
