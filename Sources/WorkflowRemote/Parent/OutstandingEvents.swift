import Logging
import Synchronization

/// Back-pressure for one remote child: how many of its events are sent or queued but not yet
/// acknowledged by its worker, against the runtime's limit.
///
/// A parent keeps every unacknowledged event so it can replay them after a failover; without a
/// bound, a caller flooding a child whose worker is gone would grow that buffer without end. The
/// count is reserved on the caller's thread, so the sink's `send` can refuse (and return `false`)
/// at once, and released on the loop when the worker acknowledges.
final class OutstandingEvents: Sendable {
    private let count = Atomic<Int>(0)
    private let refusing = Atomic<Bool>(false)
    let limit: Int
    private let logger: Logger
    private let path: String

    init(limit: Int, path: String, logger: Logger) {
        self.limit = limit
        self.path = path
        self.logger = logger
    }

    /// Takes a slot for one event; `false` when the child is at its limit.
    func reserve() -> Bool {
        let (previous, _) = count.add(1, ordering: .relaxed)
        guard previous >= limit else {
            if refusing.exchange(false, ordering: .relaxed) {
                logger.info("events accepted again", metadata: ["path": "\(path)"])
            }
            return true
        }
        count.subtract(1, ordering: .relaxed)
        if !refusing.exchange(true, ordering: .relaxed) {
            logger.warning("refusing events: \(limit) unacknowledged (back-pressure)", metadata: ["path": "\(path)"])
        }
        return false
    }

    /// Takes `slots` whatever the limit: events accepted earlier (by the proxy or the process
    /// this child continues from) are not refused again.
    func take(_ slots: Int) {
        guard slots > 0 else { return }
        count.add(slots, ordering: .relaxed)
    }

    /// Frees `slots` (acknowledged events, or a reservation that was not sent).
    func release(_ slots: Int) {
        guard slots > 0 else { return }
        count.subtract(slots, ordering: .relaxed)
    }

    var current: Int { count.load(ordering: .relaxed) }
}
