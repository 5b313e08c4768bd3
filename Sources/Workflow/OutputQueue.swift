import Synchronization

/// One subscriber's outputs (`WorkflowHost.outputs`): unbounded and in order, each appended and
/// taken in constant time.
///
/// `AsyncStream`'s own buffer takes each element with `Array.removeFirst()`, which moves every
/// element behind it: a subscriber that fell far behind (a burst of remote events) paid for a
/// move of its whole backlog on every output, and yielding cost as much again. The stream a
/// host hands out is now `AsyncStream(unfolding:)` over this queue.
///
/// The items are a ring buffer of `Output`s in memory of their own, and the lock's closures
/// return only `Bool`s: this code is not specialised for the host's output type, and every
/// `[Output]`, `Output?` or generic lock result used to cost a generic metadata lookup (several
/// per output on the publishing side).
///
/// `@unchecked Sendable`: every stored property is read and written only inside `lock`.
final class OutputQueue<Output: Sendable>: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    /// `capacity` slots; `count` of them, from `head` on (wrapping), hold the untaken outputs.
    private var items: UnsafeMutablePointer<Output>?
    private var capacity = 0
    private var head = 0
    private var count = 0
    /// The subscriber suspended in `next()` while the queue was empty.
    private var waiter: UnsafeContinuation<Output?, Never>?
    private var finished = false

    deinit {
        removeAllLocked()
        items?.deallocate()
    }

    /// Appends `output`, and hands the oldest output to a waiting subscriber. Dropped once
    /// finished.
    ///
    /// With `wake: false` a waiting subscriber is left waiting (`wake()` follows): the host
    /// applying a worker's flush of hundreds of outputs then resumes its reader once, not once
    /// per output (each resume is a task switch and, often, a thread wake-up).
    func push(_ output: Output, wake: Bool = true) {
        let waiting = lock.withLock { _ -> Bool in
            if finished { return false }
            appendLocked(output)
            return wake && waiter != nil
        }
        if waiting { self.wake() }
    }

    private func appendLocked(_ output: Output) {
        if count == capacity {
            let grown = Swift.max(16, capacity * 2)
            let storage = UnsafeMutablePointer<Output>.allocate(capacity: grown)
            if let items {
                // The untaken outputs, oldest first, move to the front of the new storage.
                let firstPart = Swift.min(count, capacity - head)
                storage.moveInitialize(from: items + head, count: firstPart)
                (storage + firstPart).moveInitialize(from: items, count: count - firstPart)
                items.deallocate()
            }
            items = storage
            capacity = grown
            head = 0
        }
        var tail = head + count
        if tail >= capacity { tail -= capacity }
        (items! + tail).initialize(to: output)
        count += 1
    }

    /// Removes and returns the oldest output; only with `count > 0`.
    private func takeOldestLocked() -> Output {
        let output = (items! + head).move()
        head += 1
        if head == capacity { head = 0 }
        count -= 1
        if count == 0 { head = 0 }
        return output
    }

    private func removeAllLocked() {
        while count > 0 { _ = takeOldestLocked() }
    }

    /// Resumes a waiting subscriber with the oldest queued output, if both are there.
    func wake() {
        var ready: Output?
        let waiter = lock.withLock { _ -> UnsafeContinuation<Output?, Never>? in
            guard let waiter = self.waiter, takeLockedOrEnd(&ready) else { return nil }
            self.waiter = nil
            return waiter
        }
        waiter?.resume(returning: ready)
    }

    /// The next output, waiting for one if none is queued; `nil` once finished and drained (or
    /// cancelled).
    func next() async -> Output? {
        var ready: Output?
        if takeOrEnd(&ready) { return ready }
        return await withUnsafeContinuation { continuation in
            var ready: Output?
            let answered = lock.withLock { _ -> Bool in
                if takeLockedOrEnd(&ready) { return true }
                precondition(waiter == nil, "WorkflowHost.outputs: a stream read by two tasks at once")
                waiter = continuation
                return false
            }
            if answered { continuation.resume(returning: ready) }
        }
    }

    /// No more outputs: the subscriber reads what is queued, then `nil`.
    func finish() {
        var ready: Output?
        let waiter = lock.withLock { _ -> UnsafeContinuation<Output?, Never>? in
            finished = true
            defer { self.waiter = nil }
            // A waiter left waiting by `push(_:wake: false)` takes the oldest output first.
            if self.waiter != nil { _ = takeLockedOrEnd(&ready) }
            return self.waiter
        }
        waiter?.resume(returning: ready)
    }

    /// The subscriber's task was cancelled: `nil` now, and nothing more is kept.
    func cancel() {
        let waiter = lock.withLock { _ -> UnsafeContinuation<Output?, Never>? in
            finished = true
            removeAllLocked()
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Takes the oldest output into `output` (returns `true`), or returns `true` with `nil` when
    /// finished and drained; `false` when the subscriber must wait.
    private func takeOrEnd(_ output: inout Output?) -> Bool {
        lock.withLock { _ in takeLockedOrEnd(&output) }
    }

    private func takeLockedOrEnd(_ output: inout Output?) -> Bool {
        guard count > 0 else { return finished }
        output = takeOldestLocked()
        return true
    }
}
