import Foundation
import Synchronization

/// One tree the load sends events to (a session, or the shared root), as its WebSocket client
/// sees it: the latest count and token, and the events sent whose effect it has not shown yet.
final class WatchedSession: Sendable {
    /// The API prefix of its routes: `/api/sessions/ID`, or `/api` for the shared root.
    let api: String

    private struct State {
        var token: String?
        /// The count of the first rendering showing the remote child; `nil` before.
        var base: Int?
        var count = -1
        /// Events sent and not refused.
        var sent = 0
        /// Per event sent and not yet shown: the count that shows it, and when it was POSTed.
        var pending: [(expected: Int, postedAt: UInt64)] = []
    }
    private let state = Mutex(State())

    init(api: String) { self.api = api }

    var isReady: Bool { state.withLock { $0.base != nil && $0.token != nil } }
    var outstanding: Int { state.withLock { $0.pending.count } }

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

    /// The event that was to show as `expected` was refused: it will never show, and those sent
    /// after it show one count earlier.
    func refused(_ expected: Int) {
        state.withLock { state in
            state.sent -= 1
            state.pending.removeAll { $0.expected == expected }
            for index in state.pending.indices where state.pending[index].expected > expected {
                state.pending[index].expected -= 1
            }
        }
    }
}
