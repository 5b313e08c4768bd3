import Foundation
import Synchronization
import Workflow

/// The sinks of a root's latest JSON rendering, by token, and the tokens earlier renderings had.
///
/// Filled by encoding a rendering with a `RenderingSinkExporter`; each rendering's set replaces
/// the previous one whole, so a token is current exactly while the latest rendering carries it.
/// Tokens that left are remembered (up to `retiredLimit`, oldest forgotten first) so a client
/// sending to one learns it is stale rather than unknown.
final class SinkTokenTable: Sendable {
    /// Decodes an event from a decoder and sends it to a sink; `false` when refused.
    typealias Delivery = @Sendable (any Decoder) throws -> Bool

    private struct State {
        var current: [String: Delivery] = [:]
        var retired: Set<String> = []
        var retiredOrder: [String] = []
    }

    /// How many retired tokens are remembered (bounded memory over a long-running root).
    let retiredLimit: Int
    private let state = Mutex(State())

    init(retiredLimit: Int = 4096) {
        self.retiredLimit = retiredLimit
    }

    /// Makes `deliveries` the current tokens; the previous tokens not among them retire.
    func install(_ deliveries: [String: Delivery]) {
        state.withLock { state in
            for token in state.current.keys where deliveries[token] == nil && !state.retired.contains(token) {
                state.retired.insert(token)
                state.retiredOrder.append(token)
            }
            for token in deliveries.keys where state.retired.contains(token) {
                state.retired.remove(token)
            }
            if state.retiredOrder.count > retiredLimit * 2 || state.retired.count > retiredLimit {
                // Drop tokens that came back, then the oldest beyond the limit.
                state.retiredOrder.removeAll { !state.retired.contains($0) }
                let excess = state.retiredOrder.count - retiredLimit
                if excess > 0 {
                    for token in state.retiredOrder.prefix(excess) { state.retired.remove(token) }
                    state.retiredOrder.removeFirst(excess)
                }
            }
            state.current = deliveries
        }
    }

    /// The delivery for `token`, or why there is none.
    func delivery(for token: String) -> Result<Delivery, RootEventError> {
        state.withLock { state in
            if let delivery = state.current[token] { return .success(delivery) }
            return .failure(state.retired.contains(token) ? .staleToken(token) : .unknownToken(token))
        }
    }
}

/// Collects the sinks met while one rendering is encoded to JSON.
///
/// Sinks nothing can route to (a placeholder's closure sink) encode as `null`: a client sees
/// there is nothing to send to, and the rest of the rendering is still served.
final class RenderingSinkExporter: SinkExporter {
    private let collected = Mutex<[String: SinkTokenTable.Delivery]>([:])

    var encodesUnroutableSinksAsNull: Bool { true }

    func export(token: String, deliver: @escaping @Sendable (any Decoder) throws -> Void) {
        collected.withLock { $0[token] = { decoder in
            try deliver(decoder)
            return true
        } }
    }

    func export(token: String, deliverReportingAcceptance deliver: @escaping @Sendable (any Decoder) throws -> Bool) {
        collected.withLock { $0[token] = deliver }
    }

    /// Everything collected so far.
    var deliveries: [String: SinkTokenTable.Delivery] { collected.withLock { $0 } }
}

/// Hands a `JSONDecoder`'s decoder to a sink's delivery: decoding this type *is* delivering.
struct JSONEventDelivery: Decodable {
    static let key = CodingUserInfoKey(rawValue: "workflow.cluster.eventDelivery")!

    /// The delivery to run and, after decoding, whether the sink accepted.
    final class Box: Sendable {
        let delivery: SinkTokenTable.Delivery
        let accepted = Mutex(false)
        init(_ delivery: @escaping SinkTokenTable.Delivery) { self.delivery = delivery }
    }

    init(from decoder: any Decoder) throws {
        guard let box = decoder.userInfo[Self.key] as? Box else { throw SinkCodingError.noTransport }
        let accepted = try box.delivery(decoder)
        box.accepted.withLock { $0 = accepted }
    }

    /// Decodes `json` into the delivery's event and sends it; returns whether it was accepted.
    static func deliver(_ json: Data, through delivery: @escaping SinkTokenTable.Delivery) throws -> Bool {
        let box = Box(delivery)
        let decoder = JSONDecoder()
        decoder.userInfo[key] = box
        _ = try decoder.decode(JSONEventDelivery.self, from: json)
        return box.accepted.withLock { $0 }
    }
}
