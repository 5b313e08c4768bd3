import Foundation
import Synchronization
import WorkflowGateway

/// One tree the load sends events to (a session, or the shared root), as its WebSocket client
/// sees it: the latest count and token, the events sent whose effect it has not shown yet, and
/// how the events sent were answered.
final class WatchedSession: Sendable {
    /// The API prefix of its routes: `/api/sessions/ID`, or `/api` for the shared root.
    let api: String
    /// The gateway it is reached at.
    let gateway: GatewayConnections
    /// The session (`nil`: the shared root).
    let session: BenchSession?
    /// Whether its stream sends changes after a first whole frame (`?deltas=1`, each applied,
    /// and acknowledged once half the stream's window is, as the client library does) rather
    /// than whole frames: the environment's `SESSION_BENCH_DELTAS=1`.
    let deltas: Bool

    private struct State {
        var token: String? {
            didSet { if token != oldValue { eventPath = nil } }
        }
        /// The event route of `token`, escaped once per token (not once per event: the load
        /// shares the cores with the daemons it measures).
        var eventPath: String?
        /// The count of the first rendering showing the remote child; `nil` before.
        var base: Int?
        var count = -1
        /// Events sent and not refused.
        var sent = 0
        /// Per event sent and not yet shown: the count that shows it, and when it was POSTed.
        var pending: [(expected: Int, postedAt: UInt64)] = []
        /// Events answered 202, and those answered otherwise or not at all.
        var answers = (accepted: 0, refused: 0)
        /// The rendering the stream brought so far (a delta client's).
        var rendering: JSONValue = .null
        /// The stream's window (its whole frame says it) and the messages applied since the last
        /// acknowledgement.
        var window = 1
        var unacknowledged = 0
    }
    private let state = Mutex(State())

    /// `session` (`nil`: the shared root) on `gateway`.
    init(_ session: BenchSession?, on gateway: GatewayConnections, deltas: Bool = ProcessInfo.processInfo.environment["SESSION_BENCH_DELTAS"] == "1") {
        self.session = session
        self.gateway = gateway
        self.deltas = deltas
        api = session?.api ?? "/api"
    }

    /// The path of its WebSocket rendering stream (with its query).
    var streamPath: String { (session == nil ? "/api/renderings" : api + "/renderings") + (deltas ? "?deltas=1" : "") }
    var isReady: Bool { state.withLock { $0.base != nil && $0.token != nil } }
    var outstanding: Int { state.withLock { $0.pending.count } }
    /// How its events were answered so far.
    var answers: (accepted: Int, refused: Int) { state.withLock { $0.answers } }

    /// A rendering message arrived at `now`: the latencies of the events it shows, and the
    /// sequence a delta client acknowledges now (once half the window is unacknowledged).
    func received(_ text: String, at now: UInt64) -> (shown: [UInt64], ack: UInt64?) {
        guard deltas else {
            guard let counter = BoardFrame.decode(text)?.rendering.c else { return ([], nil) }
            return (shown(counter, at: now), nil)
        }
        guard let message = JSONValue(json: Data(text.utf8)), case .object(let object) = message,
            case .integer(let sequence)? = object["sequence"]
        else { return ([], nil) }
        let (rendering, acknowledge): (JSONValue?, Bool) = state.withLock { state in
            if let ops = object["ops"] {
                guard let changed = try? JSONDelta(wire: ops).applied(to: state.rendering) else { return (nil, false) }
                state.rendering = changed
            } else if let whole = object["rendering"] {
                state.rendering = whole
                if case .integer(let window)? = object["window"], window > 0 { state.window = Int(window) }
            }
            state.unacknowledged += 1
            guard state.unacknowledged >= max(1, state.window / 2) else { return (state.rendering, false) }
            state.unacknowledged = 0
            return (state.rendering, true)
        }
        let ack = acknowledge ? UInt64(sequence) : nil
        guard let rendering, let counter = BoardFrame.counter(in: rendering) else { return ([], ack) }
        return (shown(counter, at: now), ack)
    }

    /// The latencies of the events `counter` shows.
    private func shown(_ counter: BoardFrame.Board.Counter, at now: UInt64) -> [UInt64] {
        guard counter.count >= 0 else { return [] }
        return state.withLock { state in
            state.count = counter.count
            if let token = counter.onIncrement { state.token = token }
            if state.base == nil { state.base = counter.count }
            var shown: [UInt64] = []
            while let first = state.pending.first, first.expected <= counter.count {
                shown.append(now - first.postedAt)
                state.pending.removeFirst()
            }
            return shown
        }
    }

    /// Records an event about to be POSTed at `now`: its route and the count that will show it;
    /// `nil` before the first rendering.
    func send(at now: UInt64) -> (path: String, expected: Int)? {
        state.withLock { state in
            guard let base = state.base, let token = state.token else { return nil }
            state.sent += 1
            let expected = base + state.sent
            state.pending.append((expected, now))
            let path = state.eventPath ?? "\(api)/events/" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
            state.eventPath = path
            return (path, expected)
        }
    }

    /// An event sent was answered 202.
    func accepted() { state.withLock { $0.answers.accepted += 1 } }

    /// The event that was to show as `expected` was refused (or not answered): it will never show
    /// (or is in doubt), and those sent after it show one count earlier.
    func refused(_ expected: Int) {
        state.withLock { state in
            state.answers.refused += 1
            state.sent -= 1
            state.pending.removeAll { $0.expected == expected }
            for index in state.pending.indices where state.pending[index].expected > expected {
                state.pending[index].expected -= 1
            }
        }
    }
}
