import Synchronization

/// One subscriber's outputs (`WorkflowHost.outputs`): unbounded and in order, each appended and
/// taken in constant time.
///
/// `AsyncStream`'s own buffer takes each element with `Array.removeFirst()`, which moves every
/// element behind it: a subscriber that fell a few thousand outputs behind (a burst of remote
/// events) paid thousands of instructions per output, and yielding cost as much again. The
/// stream a host hands out is now `AsyncStream(unfolding:)` over this queue.
///
/// `@unchecked Sendable`: every stored property is read and written only inside `lock`.
final class OutputQueue<Output: Sendable>: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private var items: [Output] = []
    /// Index of the oldest item not taken yet; taken items are cleared in bulk.
    private var head = 0
    /// The subscriber suspended in `next()` while the queue was empty.
    private var waiter: UnsafeContinuation<Output?, Never>?
    private var finished = false

    /// Appends `output`, or hands it straight to a waiting subscriber. Dropped once finished.
    ///
    /// With `wake: false` a waiting subscriber is left waiting (`wake()` follows): the host
    /// applying a worker's flush of hundreds of outputs then resumes its reader once, not once
    /// per output (each resume is a task switch and, often, a thread wake-up).
    func push(_ output: Output, wake: Bool = true) {
        var ready: Output? = output
        let waiter = lock.withLock { _ -> UnsafeContinuation<Output?, Never>? in
            if finished { return nil }
            guard wake, let waiter = self.waiter else {
                items.append(output)
                return nil
            }
            self.waiter = nil
            if head < items.count {
                // Outputs queued without a wake are older: the reader gets the oldest.
                items.append(output)
                _ = takeLockedOrEnd(&ready)
            }
            return waiter
        }
        waiter?.resume(returning: ready)
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
            items.removeAll()
            head = 0
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
        guard head < items.count else { return finished }
        output = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return true
    }
}
