/// The session commits waiting for their trees' remote children to acknowledge the events sent
/// to them (`SessionLoop.whenEventsAcknowledged(within:_:)`), kept as they are asked and
/// answered: a value, so its rules are tested without sockets.
///
/// A session's event to a remote child is committed with the tree that sent it; the rendering
/// the child's answer brings needs a checkpoint of its own unless the capture waits for that
/// answer. Each wait names the events it waits for (each child's last one when it was asked),
/// not whatever is outstanding when it is checked, so a session receiving events all the time
/// is not held until the deadline. What each check costs follows the waits pending, never the
/// children held.
struct AcknowledgementWaits {
    /// One capture waiting.
    struct Wait {
        /// Each child and the last of its events the capture waits for.
        var awaited: [(child: UInt64, through: UInt64)]
        /// When it runs whatever was acknowledged.
        let deadline: ContinuousClock.Instant
        /// The capture.
        let body: @Sendable () -> Void
    }

    private var waits: [Wait] = []

    /// How many captures wait.
    var count: Int { waits.count }

    /// The earliest deadline of a wait, if any (the loop polls no longer than until then).
    var earliestDeadline: ContinuousClock.Instant? { waits.lazy.map(\.deadline).min() }

    /// Adds a capture waiting for `awaited` until `deadline`.
    mutating func add(_ awaited: [(child: UInt64, through: UInt64)], deadline: ContinuousClock.Instant, body: @escaping @Sendable () -> Void) {
        waits.append(Wait(awaited: awaited, deadline: deadline, body: body))
    }

    /// Removes and returns the captures whose events are all acknowledged (`isAcknowledged`
    /// says, for a child and an event of it) or whose deadline has passed at `now`, in the order
    /// they were added.
    mutating func takeDue(now: ContinuousClock.Instant, isAcknowledged: (UInt64, UInt64) -> Bool) -> [@Sendable () -> Void] {
        guard !waits.isEmpty else { return [] }
        var due: [@Sendable () -> Void] = []
        waits.removeAll { wait in
            guard now >= wait.deadline || wait.awaited.allSatisfy({ isAcknowledged($0.child, $0.through) }) else { return false }
            due.append(wait.body)
            return true
        }
        return due
    }

    /// Removes and returns every capture (the loop ended: nothing more will be acknowledged).
    mutating func takeAll() -> [@Sendable () -> Void] {
        defer { waits.removeAll() }
        return waits.map(\.body)
    }
}
