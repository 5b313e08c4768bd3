/// The sessions that became idle (no client holds them), in the order they did: what the idle
/// passivation looks at instead of every session.
///
/// A session is appended each time its last client lets go, with that moment; it is due once
/// the idle timeout has passed since. The moments only grow, so the due ones are at the front,
/// and a passivation round costs what it passivates, not what the directory holds (at 100,000
/// sessions a scan of all of them per round cost the coordinator's actor more than the sessions'
/// own work). An entry is only a hint: a session used again after it was appended is appended
/// again, and its earlier entry is found stale (`lastUsed` moved on) when it comes due. A value
/// without I/O; the directory keeps it.
struct IdleSessionQueue {
    private var queue: [(id: SessionID, since: ContinuousClock.Instant)] = []
    private var head = 0

    /// How many entries wait (stale ones included).
    var count: Int { queue.count - head }

    /// The session `id` has had no client since `since`.
    mutating func becameIdle(_ id: SessionID, since: ContinuousClock.Instant) {
        queue.append((id, since))
    }

    /// Removes and returns the entries idle for `timeout` or longer at `now`, oldest first.
    mutating func takeDue(now: ContinuousClock.Instant, timeout: Duration) -> [(id: SessionID, since: ContinuousClock.Instant)] {
        var due: [(id: SessionID, since: ContinuousClock.Instant)] = []
        while head < queue.count, now - queue[head].since >= timeout {
            due.append(queue[head])
            head += 1
        }
        // The storage before `head` is given back once it is most of the array.
        if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        } else if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
        return due
    }
}
