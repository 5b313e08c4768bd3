import Foundation

/// The default `RuntimeLoop`: one dedicated thread draining a FIFO queue of jobs.
public final class ThreadLoop: RuntimeLoop {
    private let queue = JobQueue()

    /// Starts the loop's thread. `name` shows up in debuggers and thread listings.
    public init(name: String = "workflow.loop") {
        let queue = self.queue
        let thread = Thread { queue.runUntilStopped() }
        thread.name = name
        thread.start()
    }

    deinit {
        queue.stop()
    }

    public func execute(_ job: @escaping @Sendable () -> Void) {
        queue.append(job)
    }

    public var inLoop: Bool {
        queue.isRunningOnCurrentThread
    }

    /// Lets the thread finish the jobs already queued and exit. Jobs submitted later never run.
    public func shutdown() {
        queue.stop()
    }
}

/// The FIFO behind `ThreadLoop`.
///
/// `@unchecked Sendable` is sound: `jobs`, `isStopped` and `owner` are only touched while
/// `condition`'s lock is held.
final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isStopped = false
    private var owner: pthread_t?

    var isRunningOnCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let owner else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    func append(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        if !isStopped {
            jobs.append(job)
            condition.signal()
        }
        condition.unlock()
    }

    func stop() {
        condition.lock()
        isStopped = true
        condition.signal()
        condition.unlock()
    }

    func runUntilStopped() {
        condition.lock()
        owner = pthread_self()
        condition.unlock()
        var batch: [@Sendable () -> Void] = []
        while true {
            condition.lock()
            while jobs.isEmpty && !isStopped { condition.wait() }
            if jobs.isEmpty && isStopped {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job() }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
