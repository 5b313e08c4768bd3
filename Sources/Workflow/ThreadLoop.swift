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

    /// Runs `job` on the calling thread when the loop's thread is idle, lending it the loop's
    /// role (see `RuntimeLoop.runIfIdle`).
    public func runIfIdle(_ job: () -> Void) -> Bool {
        queue.runIfIdle(job)
    }

    /// Lets the thread finish the jobs already queued and exit. Jobs submitted later never run.
    public func shutdown() {
        queue.stop()
    }
}

/// The FIFO behind `ThreadLoop`.
///
/// `@unchecked Sendable` is sound: `jobs`, `isStopped`, `isBusy` and `owner` are only touched
/// while `condition`'s lock is held.
///
/// `owner` is the thread that holds the loop's role: the loop's own thread, or a thread the idle
/// loop is lent to (`runIfIdle`). `isBusy` is set while either runs jobs, so they never overlap.
final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isStopped = false
    private var isBusy = false
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

    func runIfIdle(_ job: () -> Void) -> Bool {
        condition.lock()
        guard !isStopped, !isBusy, jobs.isEmpty, let loopThread = owner else {
            condition.unlock()
            return false
        }
        isBusy = true
        owner = pthread_self()
        condition.unlock()
        job()
        condition.lock()
        owner = loopThread
        isBusy = false
        // Jobs queued meanwhile (or a stop) found the loop busy: its thread runs them now.
        if !jobs.isEmpty || isStopped { condition.signal() }
        condition.unlock()
        return true
    }

    func runUntilStopped() {
        condition.lock()
        owner = pthread_self()
        condition.unlock()
        var batch: [@Sendable () -> Void] = []
        while true {
            condition.lock()
            // While the loop is lent (`isBusy`), its own thread waits for it back.
            while (jobs.isEmpty && !isStopped) || isBusy { condition.wait() }
            if jobs.isEmpty && isStopped {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            isBusy = true
            condition.unlock()
            for job in batch { job() }
            batch.removeAll(keepingCapacity: true)
            condition.lock()
            isBusy = false
            condition.unlock()
        }
    }
}
