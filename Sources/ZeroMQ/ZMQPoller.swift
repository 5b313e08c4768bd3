import CZeroMQ

/// Waits on several sockets (and file descriptors) at once with `zmq_poll`.
///
/// This is the heart of a single-threaded event loop: one thread owns all its sockets,
/// registers them here, and sleeps in ``poll(timeout:)`` until one is readable or
/// writable, a timer is due, or another thread calls ``ZMQWakeup/wake()`` on a registered
/// wakeup.
///
/// Not `Sendable`, like the sockets it holds: it belongs to the loop's thread. It keeps
/// strong references to registered sockets and wakeups so their handles stay valid while
/// registered; a registered socket that gets closed makes `poll` throw
/// ``ZMQError/isClosedSocket`` instead of touching a dangling handle.
public final class ZMQPoller {
    /// The conditions a registration waits for, and which of them occurred.
    public struct Events: OptionSet, Sendable, Hashable {
        /// The bit pattern, using libzmq's `ZMQ_POLL*` values.
        public let rawValue: Int16
        /// Creates a set from `ZMQ_POLL*` bits.
        public init(rawValue: Int16) { self.rawValue = rawValue }
        /// At least one whole message can be received without blocking.
        public static let readable = Events(rawValue: Int16(ZMQ_POLLIN))
        /// At least one message can be sent without blocking.
        public static let writable = Events(rawValue: Int16(ZMQ_POLLOUT))
        /// An error condition on a plain file descriptor (never reported for sockets).
        public static let error = Events(rawValue: Int16(ZMQ_POLLERR))
    }

    /// Identifies one registration; returned by the `add` methods and used as the key of
    /// ``poll(timeout:)``'s result. Stable for the life of the poller, unlike an index.
    public struct Token: Sendable, Hashable {
        let value: Int
    }

    /// What a registration watches.
    private enum Source {
        case socket(ZMQSocket)
        case wakeup(ZMQWakeup)
        case fileDescriptor(Int32)
    }

    /// One registered item.
    private struct Entry {
        let token: Token
        let source: Source
        var events: Events
        /// What the last poll found it ready for.
        var ready: Events = []
    }

    /// The registrations and the `zmq_poll` items made of them, as one value: a poll prepares,
    /// polls and records in three accesses to the poller's state, where reaching each entry
    /// through the class made a run-time exclusivity check per entry and step (≈ 200
    /// instructions each, a dozen per loop turn, measured).
    private struct PollSet {
        var entries: [Entry] = []
        /// The `zmq_poll` items of the last poll, one per entry; kept so a poll allocates nothing.
        var items: [zmq_pollitem_t] = []

        /// Clears what the last poll found and lays out one item per entry.
        mutating func prepare() throws(ZMQError) {
            items.removeAll(keepingCapacity: true)
            for index in entries.indices {
                entries[index].ready = []
                let entry = entries[index]
                switch entry.source {
                case .socket(let socket):
                    guard let handle = socket.handle else { throw ZMQError.closedSocket }
                    items.append(zmq_pollitem_t(socket: handle, fd: 0, events: entry.events.rawValue, revents: 0))
                case .wakeup(let wakeup):
                    items.append(zmq_pollitem_t(socket: nil, fd: wakeup.readDescriptor, events: entry.events.rawValue, revents: 0))
                case .fileDescriptor(let descriptor):
                    items.append(zmq_pollitem_t(socket: nil, fd: descriptor, events: entry.events.rawValue, revents: 0))
                }
            }
        }

        /// Keeps what the poll found in each entry (draining ready wakeups); returns how many
        /// are ready.
        mutating func recordReady() -> Int {
            var count = 0
            for index in entries.indices where items[index].revents != 0 {
                if case .wakeup(let wakeup) = entries[index].source { wakeup.drain() }
                entries[index].ready = Events(rawValue: items[index].revents)
                count += 1
            }
            return count
        }
    }

    private var pollSet = PollSet()
    private var nextToken = 0

    /// Creates an empty poller.
    public init() {}

    private func append(_ source: Source, events: Events) -> Token {
        let token = Token(value: nextToken)
        nextToken += 1
        pollSet.entries.append(Entry(token: token, source: source, events: events))
        return token
    }

    /// Watches `socket` for `events` (by default: a message is ready to receive).
    @discardableResult
    public func add(_ socket: ZMQSocket, events: Events = .readable) -> Token {
        append(.socket(socket), events: events)
    }

    /// Watches a ``ZMQWakeup``; `poll` returns (reporting this token `.readable`) once
    /// another thread has called `wake()`, and drains the wakeup before returning.
    @discardableResult
    public func add(_ wakeup: ZMQWakeup) -> Token {
        append(.wakeup(wakeup), events: .readable)
    }

    /// Watches a monitor's event stream, so a loop can react to connects/disconnects.
    @discardableResult
    public func add(_ monitor: ZMQSocketMonitor) -> Token {
        append(.socket(monitor.socket), events: .readable)
    }

    /// Watches a plain file descriptor the caller owns (and keeps open while registered).
    @discardableResult
    public func add(fileDescriptor: Int32, events: Events = .readable) -> Token {
        append(.fileDescriptor(fileDescriptor), events: events)
    }

    /// Changes what a registration waits for, e.g. add `.writable` only while a socket
    /// has a backlog, so the loop does not spin on an always-writable socket.
    public func setEvents(_ events: Events, for token: Token) {
        guard let index = pollSet.entries.firstIndex(where: { $0.token == token }) else { return }
        pollSet.entries[index].events = events
    }

    /// Stops watching a registration and releases the poller's reference to it.
    public func remove(_ token: Token) {
        pollSet.entries.removeAll { $0.token == token }
    }

    /// Blocks until at least one registration is ready, or `timeout` passes (nil waits
    /// forever). Returns the ready registrations and what they are ready for; an empty
    /// result means the timeout elapsed.
    ///
    /// Throws ``ZMQError/isTerminated`` if the context was shut down, and
    /// ``ZMQError/isClosedSocket`` if a registered socket has been closed. Signals
    /// (`EINTR`) are absorbed: the wait resumes with the remaining time.
    public func poll(timeout: Duration? = nil) throws(ZMQError) -> [Token: Events] {
        guard try wait(timeout: timeout) > 0 else { return [:] }
        var ready: [Token: Events] = [:]
        for entry in pollSet.entries where !entry.ready.isEmpty { ready[entry.token] = entry.ready }
        return ready
    }

    /// Like ``poll(timeout:)``, but keeps what each registration is ready for in the poller
    /// (read it with ``readyEvents(for:)``) instead of returning a dictionary, and returns how
    /// many registrations are ready (0: the timeout elapsed).
    ///
    /// For an event loop that polls thousands of times a second: this allocates nothing (the
    /// `zmq_pollitem_t` array is kept between calls), where ``poll(timeout:)`` allocates its
    /// result. Errors are as for ``poll(timeout:)``.
    public func wait(timeout: Duration? = nil) throws(ZMQError) -> Int {
        try pollSet.prepare()
        guard try Self.pollItems(&pollSet.items, timeout: timeout) > 0 else { return 0 }
        return pollSet.recordReady()
    }

    /// What `token`'s registration was ready for at the last ``wait(timeout:)`` or
    /// ``poll(timeout:)`` (empty if it was not ready, or is not registered).
    public func readyEvents(for token: Token) -> Events {
        pollSet.entries.first { $0.token == token }?.ready ?? []
    }

    /// Runs `zmq_poll`, resuming after signals with the remaining time. Returns the number
    /// of ready items (0 on timeout).
    static func pollItems(_ items: inout [zmq_pollitem_t], timeout: Duration?) throws(ZMQError) -> Int32 {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            let milliseconds = deadline.map { Self.milliseconds(until: $0, clock: clock) } ?? -1
            let result = items.withUnsafeMutableBufferPointer { buffer in
                zmq_poll(buffer.baseAddress, Int32(buffer.count), milliseconds)
            }
            if result >= 0 { return result }
            let error = ZMQError.last()
            guard error.isInterrupted else { throw error }
        }
    }

    /// Whole milliseconds left until `deadline`, rounded up so that a sub-millisecond wait
    /// does not degrade into a busy `0` poll, and clamped to what `zmq_poll` accepts.
    private static func milliseconds(until deadline: ContinuousClock.Instant, clock: ContinuousClock) -> Int {
        let remaining = clock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, scaled < Int64(Int32.max) else { return Int(Int32.max) }
        return Int(scaled + fraction)
    }
}
