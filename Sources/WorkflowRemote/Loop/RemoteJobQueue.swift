import Foundation
import Synchronization
import Tracing
import ZeroMQ

/// The jobs other threads hand the remote runtime's loop, and the signal that wakes it.
///
/// The loop sleeps in `zmq_poll`; appending to an idle queue signals the wakeup socket once, so a
/// burst of jobs costs one wakeup. A job the loop's own thread appends signals nothing (the loop
/// is awake, and checks `hasJobs` before it sleeps): a worker's hosted child scheduling its own
/// drain while an event is applied costs no pipe write and no extra wake-up.
///
/// Once the loop has ended (`end(performingLaterJobsWith:)`), a job runs on the thread that
/// appends it, which holds the loop's role meanwhile, one thread at a time: a host still running
/// on a runtime that shut down keeps answering (`stop()`, an update) instead of waiting forever
/// for a loop that is gone.
final class RemoteJobQueue: Sendable {
    private struct State {
        var jobs: [RemoteJob] = []
        var wakePending = false
        var stopRequested = false
        var owner: pthread_t?
        /// Set when the loop has ended: how a job appended later is run.
        var performAfterEnd: (@Sendable (RemoteJob) -> Void)?
        /// Whether a thread is running jobs after the end (it takes the ones appended meanwhile).
        var runningAfterEnd = false
    }

    private let state = Mutex(State())
    private let wakeup: ZMQWakeup

    init(wakeup: ZMQWakeup) {
        self.wakeup = wakeup
    }

    func claimCurrentThread() {
        state.withLock { $0.owner = pthread_self() }
    }

    var isOwnerThread: Bool {
        guard let owner = state.withLock({ $0.owner }) else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    func append(_ job: @escaping @Sendable () -> Void) {
        append(.run(job))
    }

    /// Queues an event for the loop to record and send, as data: a burst of events costs no
    /// closure per event. Queued in line with the other jobs, so an event and a job one thread
    /// queues after it reach the loop in that order.
    func append(event: QueuedEvent) {
        append(.event(event))
    }

    /// Queues a traced event (`RemoteJob.tracedEvent`).
    func append(event: QueuedEvent, context: ServiceContext) {
        append(.tracedEvent(event, context))
    }

    /// Queues a job of a task that runs on the runtime as its `TaskExecutor`, unless the loop
    /// has ended; returns whether it did. After the end a task's job must not run on whichever
    /// thread resumes the task (inside that thread's own locks), so the caller hands it to the
    /// global executor instead.
    func append(task job: UnownedJob, on executor: UnownedTaskExecutor) -> Bool {
        append(.task(job, executor), unlessEnded: true)
    }

    /// Appends `job`; with `unlessEnded`, only while the loop runs (checked under the same lock
    /// as the append, so the loop cannot end in between), and returns whether it did.
    @discardableResult
    private func append(_ job: RemoteJob, unlessEnded: Bool = false) -> Bool {
        let (accepted, signal, runHere) = state.withLock { state -> (Bool, Bool, Bool) in
            if unlessEnded, state.performAfterEnd != nil { return (false, false, false) }
            let (signal, runHere) = Self.record(job, in: &state)
            return (true, signal, runHere)
        }
        if runHere { runJobsAfterEnd() }
        if signal { wakeup.wake() }
        return accepted
    }

    /// Queues `job` under the lock; returns whether the loop must be woken and whether the
    /// appending thread must run the jobs itself (the loop has ended).
    private static func record(_ job: RemoteJob, in state: inout State) -> (signal: Bool, runHere: Bool) {
        state.jobs.append(job)
        if state.performAfterEnd != nil {
            // The loop is gone: this thread runs the jobs, unless one already does (then it
            // takes this one too, in order).
            guard !state.runningAfterEnd else { return (false, false) }
            state.runningAfterEnd = true
            state.owner = pthread_self()
            return (false, true)
        }
        if let owner = state.owner, pthread_equal(owner, pthread_self()) != 0 { return (false, false) }
        defer { state.wakePending = true }
        return (!state.wakePending, false)
    }

    /// Called on the loop's thread once the loop has ended and its sockets are closed: runs what
    /// was queued after its last iteration now, and every job appended later on the appending
    /// thread with `perform`.
    func end(performingLaterJobsWith perform: @escaping @Sendable (RemoteJob) -> Void) {
        state.withLock { state in
            state.performAfterEnd = perform
            state.runningAfterEnd = true
            state.owner = pthread_self()
        }
        runJobsAfterEnd()
    }

    /// Runs queued jobs on this thread, which holds the loop's role, until none is left; then
    /// gives the role up. It takes what is queued all at once, in order (jobs appended meanwhile
    /// wait for the next turn): removing them one by one from the front would cost the length of
    /// the queue for each, and a coordinator's exit can leave tens of thousands.
    private func runJobsAfterEnd() {
        while true {
            let next = state.withLock { state -> ([RemoteJob], @Sendable (RemoteJob) -> Void)? in
                guard let perform = state.performAfterEnd, !state.jobs.isEmpty else {
                    state.runningAfterEnd = false
                    state.owner = nil
                    return nil
                }
                var taken: [RemoteJob] = []
                swap(&taken, &state.jobs)
                return (taken, perform)
            }
            guard let (jobs, perform) = next else { return }
            for job in jobs { perform(job) }
        }
    }

    /// Whether jobs are queued: the loop polls without sleeping then (its own thread's appends
    /// do not signal the wakeup).
    var hasJobs: Bool { state.withLock { !$0.jobs.isEmpty } }

    /// Appends `job` unless a stop was requested, and says whether it did: a job appended after
    /// the stop may never run, so a caller awaiting its answer must not queue it then. (Jobs
    /// appended before the stop run: the loop runs its last batch before it ends.)
    func appendUnlessStopping(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopRequested else { return (false, false) }
            state.jobs.append(.run(job))
            defer { state.wakePending = true }
            return (true, !state.wakePending)
        }
        if signal { wakeup.wake() }
        return accepted
    }

    /// Everything queued, into `taken` (which must be empty; its storage becomes the queue's, so
    /// the loop reuses two buffers instead of allocating one per iteration); re-arms the wakeup.
    /// Returns whether a stop was requested.
    func takeAll(into taken: inout [RemoteJob]) -> Bool {
        state.withLock { state in
            swap(&state.jobs, &taken)
            state.wakePending = false
            return state.stopRequested
        }
    }

    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wakeup.wake()
    }
}

/// Something queued for the remote runtime's loop.
enum RemoteJob: Sendable {
    /// Code to run on the loop.
    case run(@Sendable () -> Void)
    /// An event for a remote child (`ParentDriver.sendEvent`).
    case event(QueuedEvent)
    /// An event sent inside a span of a runtime that traces, with that span's context: a case
    /// of its own (boxed), so an untraced event's job is as large as it was and copies nothing more.
    indirect case tracedEvent(QueuedEvent, ServiceContext)
    /// A job of a task running on the runtime as its `TaskExecutor` (`RemoteRuntime.enqueue`),
    /// and that executor, which the job runs on.
    case task(UnownedJob, UnownedTaskExecutor)
}

/// An event a sink decoded from a remote child's rendering sent, on its way to the loop, which
/// records it for the child and sends it to its worker.
struct QueuedEvent: Sendable {
    let childID: UInt64
    let path: String
    let token: String
    let bytes: [UInt8]
}
