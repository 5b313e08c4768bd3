import Foundation
import Synchronization
import Workflow

/// The sinks of a root's recent JSON renderings, by token.
///
/// Filled by encoding each rendering with a `RenderingSinkExporter`, which names each sink by its
/// place (`ROUTE@INCARNATION`: the runtime's token without its render pass, see `SinkToken` in
/// the core; the route names the node and the sink's position in it), so a client's token stays
/// the same while its sink is rendered there, and an event sent to it reaches the sink the latest
/// rendering has at that place (a row that moved to another position has that position's token). A token the latest
/// rendering does not carry is *stale*: that sink is no longer rendered (its node may be gone,
/// and an event sent there would be dropped without a word). The one exception is a token of
/// another incarnation of a remote child at a route still rendered (the child restarted on
/// another worker, whose sinks carry its new incarnation): it still delivers, to the child's
/// sink at that place, while it is among the recently retired.
///
/// Memory stays bounded: the tokens of the latest rendering plus the `retainedLimit` most
/// recently retired ones keep their deliveries; older ones are forgotten but remembered by
/// name (up to `forgottenLimit`), so a client sending to one learns it is *stale* rather than
/// *unknown*. A well-formed token whose host incarnation (`@INCARNATION`) no rendering of this
/// process carried was made before a restart (of the coordinator, or of the node that made it):
/// it answers *restarted*, which a client can tell from a typo.
final class SinkTokenTable: Sendable {
    /// Decodes an event from a decoder and sends it to a sink; `false` when refused.
    typealias Delivery = @Sendable (any Decoder) throws -> Bool

    private struct State {
        var current: [String: Delivery] = [:]
        var currentRoutes: Set<Substring> = []
        var retained: [String: Delivery] = [:]
        var retainedOrder: [String] = []
        var forgotten: Set<String> = []
        var forgottenOrder: [String] = []
        /// The host incarnations tokens of this process's renderings carried (a few: one per
        /// start of a host), oldest first.
        var incarnations: Set<Substring> = []
        var incarnationOrder: [Substring] = []
    }

    /// How many retired tokens keep their deliveries.
    let retainedLimit: Int
    /// How many forgotten tokens are still recognised as stale.
    let forgottenLimit: Int
    private let state = Mutex(State())

    init(retainedLimit: Int = 4096, forgottenLimit: Int = 65_536) {
        self.retainedLimit = retainedLimit
        self.forgottenLimit = forgottenLimit
    }

    /// Makes `deliveries` the current tokens; the previous tokens not among them retire.
    func install(_ deliveries: [String: Delivery]) {
        state.withLock { state in
            for (token, delivery) in state.current where deliveries[token] == nil && state.retained[token] == nil {
                state.retained[token] = delivery
                state.retainedOrder.append(token)
            }
            state.current = deliveries
            state.currentRoutes = Set(deliveries.keys.map(Self.route(of:)))
            for token in deliveries.keys {
                guard let slice = Self.incarnation(of: token), !state.incarnations.contains(slice) else { continue }
                // A copy: the set must not keep a whole token alive.
                let incarnation = Substring(String(slice))
                state.incarnations.insert(incarnation)
                state.incarnationOrder.append(incarnation)
                if state.incarnationOrder.count > Self.incarnationLimit { state.incarnations.remove(state.incarnationOrder.removeFirst()) }
            }
            let excess = state.retainedOrder.count - retainedLimit
            guard excess > 0 else { return }
            for token in state.retainedOrder.prefix(excess) where state.retained.removeValue(forKey: token) != nil {
                if state.forgotten.insert(token).inserted { state.forgottenOrder.append(token) }
            }
            state.retainedOrder.removeFirst(excess)
            let forgottenExcess = state.forgottenOrder.count - forgottenLimit
            if forgottenExcess > 0 {
                for token in state.forgottenOrder.prefix(forgottenExcess) { state.forgotten.remove(token) }
                state.forgottenOrder.removeFirst(forgottenExcess)
            }
        }
    }

    /// The delivery for `token`, or why there is none.
    func delivery(for token: String) -> Result<Delivery, RootEventError> {
        state.withLock { state in
            if let delivery = state.current[token] { return .success(delivery) }
            if let delivery = state.retained[token] {
                return state.currentRoutes.contains(Self.route(of: token)) ? .success(delivery) : .failure(.staleToken(token))
            }
            if state.forgotten.contains(token) { return .failure(.staleToken(token)) }
            if let incarnation = Self.incarnation(of: token), !state.incarnations.contains(incarnation) {
                return .failure(.restartedToken(token))
            }
            return .failure(.unknownToken(token))
        }
    }

    /// How many host incarnations are remembered (each start of a host adds one).
    static let incarnationLimit = 65_536

    /// The host incarnation a well-formed token carries (`…@INCARNATION`, in base 36, or a
    /// token of an earlier build, `…@INCARNATION.PASS`), or `nil` for a token of another shape.
    static func incarnation(of token: String) -> Substring? {
        guard let parts = SinkToken(parsing: token), parts.isWellFormed else { return nil }
        return parts.incarnation
    }

    /// The part of a token that names where its sink sits (the node and its position there),
    /// without the incarnation (`SinkToken.route`), or the whole token when it has no `@`.
    static func route(of token: String) -> Substring {
        SinkToken(parsing: token)?.route ?? token[...]
    }
}

/// Collects the sinks met while one rendering is encoded to JSON.
///
/// Sinks nothing can route to (a placeholder's closure sink) encode as `null`: a client sees
/// there is nothing to send to, and the rest of the rendering is still served.
final class RenderingSinkExporter: SinkExporter {
    private let collected = Mutex<[String: SinkTokenTable.Delivery]>([:])

    var encodesUnroutableSinksAsNull: Bool { true }

    /// What this tree's names start with (`MARK|`), or `nil` (the shared root: none).
    let treeMark: String?

    init(treeMark: String? = nil) {
        self.treeMark = treeMark
    }

    /// A client's token stays the same while its sink is rendered at the same place, and a
    /// session's tokens carry its mark (`TreeMark`), so one tree's token is unknown in another.
    func name(forToken token: String) -> String {
        let place = SinkToken.place(of: token)
        guard let treeMark else { return place }
        return treeMark + TreeMark.separator + place
    }

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

/// The mark a session's sink tokens start with (`MARK|…`): the first 12 hex digits of its id.
///
/// Each tree (the shared root, each session) knows only its own tokens, but a token of *another*
/// tree would otherwise look like one from before a restart (410 `restarted`). The mark tells
/// them apart without any shared state: a token marked for another tree, or marked in the shared
/// root, or unmarked in a session, is unknown here (404), as a token of one session must be in
/// every other.
enum TreeMark {
    static let separator = "|"

    /// The mark of the session `id`.
    static func of(session id: String) -> String { String(id.prefix(12)) }

    /// Whether `token` belongs to the tree marked `mark` (`nil`: the shared root).
    static func token(_ token: String, belongsTo mark: String?) -> Bool {
        guard let mark else { return marked(token) == nil }
        return marked(token) == mark[...]
    }

    /// The mark `token` carries, if it has one: 12 lowercase hex digits before its first `|`.
    ///
    /// Read over the UTF-8 bytes when they are ASCII up to that `|` and just after it: by
    /// `Character`, with its Unicode properties, it cost about 28,000 instructions per event a
    /// session was sent. Any other token is read by `Character` as before (a fullwidth digit is
    /// a hex digit there), so both ways answer alike.
    private static func marked(_ token: String) -> Substring? {
        let utf8 = token.utf8
        guard let bar = utf8.firstIndex(of: UInt8(ascii: "|")) else { return nil }
        let next = utf8.index(after: bar)
        let prefix = utf8[..<bar]
        let nextIsASCII = next == utf8.endIndex || utf8[next] < 0x80
        let isHexDigit = { (byte: UInt8) in
            (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
        if nextIsASCII, prefix.count == 12, prefix.allSatisfy(isHexDigit) { return token[..<bar] }
        return !nextIsASCII || prefix.contains(where: { $0 >= 0x80 }) ? markedByCharacter(token) : nil
    }

    /// `marked` by `Character`, for a token that is not ASCII around its mark.
    private static func markedByCharacter(_ token: String) -> Substring? {
        guard let bar = token.firstIndex(of: "|") else { return nil }
        let mark = token[..<bar]
        guard mark.count == 12, mark.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return mark
    }
}
