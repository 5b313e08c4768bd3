import Foundation
import Synchronization

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

    private struct State {
        var token: String?
        /// The count of the first rendering showing the remote child; `nil` before.
        var base: Int?
        var count = -1
        /// Events sent and not refused.
        var sent = 0
        /// Per event sent and not yet shown: the count that shows it, and when it was POSTed.
        var pending: [(expected: Int, postedAt: UInt64)] = []
        /// Events answered 202, and those answered otherwise or not at all.
        var answers = (accepted: 0, refused: 0)
    }
    private let state = Mutex(State())

    /// `session` (`nil`: the shared root) on `gateway`.
    init(_ session: BenchSession?, on gateway: GatewayConnections) {
        self.session = session
        self.gateway = gateway
        api = session?.api ?? "/api"
    }

    /// The path of its WebSocket rendering stream.
    var streamPath: String { session == nil ? "/api/renderings" : api + "/renderings" }
    var isReady: Bool { state.withLock { $0.base != nil && $0.token != nil } }
    var outstanding: Int { state.withLock { $0.pending.count } }
    /// How its events were answered so far.
    var answers: (accepted: Int, refused: Int) { state.withLock { $0.answers } }

    /// A rendering message arrived at `now`: the latencies of the events it shows.
    func received(_ text: String, at now: UInt64) -> [UInt64] {
        guard let counter = BoardFrame.decode(text)?.rendering.c, counter.count >= 0 else { return [] }
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
            let escaped = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
            return ("\(api)/events/\(escaped)", expected)
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
