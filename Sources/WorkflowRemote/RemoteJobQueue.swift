import Foundation
import Synchronization
import ZeroMQ

/// The jobs other threads hand the remote runtime's loop, and the signal that wakes it.
///
/// The loop sleeps in `zmq_poll`; appending to an idle queue signals the wakeup socket once, so a
/// burst of jobs costs one wakeup. A job the loop's own thread appends signals nothing (the loop
/// is awake, and checks `hasJobs` before it sleeps): a worker's hosted child scheduling its own
/// drain while an event is applied costs no pipe write and no extra wake-up.
final class RemoteJobQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var wakePending = false
        var stopRequested = false
        var owner: pthread_t?
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
        let signal = state.withLock { state in
            state.jobs.append(job)
            if let owner = state.owner, pthread_equal(owner, pthread_self()) != 0 { return false }
            defer { state.wakePending = true }
            return !state.wakePending
        }
        if signal { wakeup.wake() }
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
            state.jobs.append(job)
            defer { state.wakePending = true }
            return (true, !state.wakePending)
        }
        if signal { wakeup.wake() }
        return accepted
    }

    /// Everything queued; re-arms the wakeup.
    func takeAll() -> (jobs: [@Sendable () -> Void], stopRequested: Bool) {
        state.withLock { state in
            let jobs = state.jobs
            state.jobs = []
            state.wakePending = false
            return (jobs, state.stopRequested)
        }
    }

    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wakeup.wake()
    }
}
