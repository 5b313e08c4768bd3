import Logging
import NIOCore
import Synchronization

/// Keeps a leader's lease as `LeaderTerm` says, entirely on the lease connection's event loop:
/// its timers are the loop's scheduled tasks and its renewals the connection's futures, so no
/// task of the process's concurrency pool stands between a renewal's due time, its sending and
/// its answer. The coordinator's own work (render passes, commits, HTTP) saturating that pool on
/// a loaded machine delays the lease no more than the operating system delays one thread.
///
/// Ends once: stepping down (after logging why and calling `onStepDown`) when the term says so
/// or the lease's connection closes, or `stop()`.
package final class LeaseKeeper: Sendable {
    private struct State: Sendable {
        var term: LeaderTerm
        var timer: Scheduled<Void>?
        var ended = false
    }

    private enum Action {
        case none
        case renew(CoordinatorLease, askedAt: ContinuousClock.Instant, deadline: ContinuousClock.Instant)
        case stepDown(LeaderTerm.StepDownReason, FencingToken)
    }

    private let store: any EventLoopLeasedCoordinatorStore
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let onStepDown: @Sendable (LeaderTerm.StepDownReason) -> Void
    private let state: Mutex<State>
    private let end: EventLoopPromise<CoordinatorLeadership.TermEnd>

    /// A keeper of `lease`, taken now, on `store`'s lease event loop; nothing runs until `start()`.
    package init(
        lease: CoordinatorLease, schedule: LeaseSchedule, store: any EventLoopLeasedCoordinatorStore, logger: Logger,
        onStepDown: @escaping @Sendable (LeaderTerm.StepDownReason) -> Void
    ) {
        self.store = store
        self.eventLoop = store.leaseEventLoop
        self.logger = logger
        self.onStepDown = onStepDown
        self.state = Mutex(State(term: LeaderTerm(lease: lease, schedule: schedule, now: .now)))
        self.end = store.leaseEventLoop.makePromise()
    }

    /// How the term ended, once it has.
    package var ended: EventLoopFuture<CoordinatorLeadership.TermEnd> { end.futureResult }

    /// Starts keeping the lease; watches its connection, whose closing ends the term at once.
    package func start() {
        store.leaseConnectionClosed.whenComplete { [self] _ in
            state.withLock { $0.term.connectionLost() }
            step()
        }
        eventLoop.execute { [self] in step() }
    }

    /// Stops keeping the lease (the coordinator is stopping); the term ends `.stopped` with the
    /// lease held, unless it ended before.
    package func stop() {
        eventLoop.execute { [self] in
            let lease: CoordinatorLease? = state.withLock { state in
                guard !state.ended else { return nil }
                state.ended = true
                state.timer?.cancel()
                state.timer = nil
                return state.term.lease
            }
            if let lease { end.succeed(.stopped(lease)) }
        }
    }

    /// Does what the term says now; called on the loop, by a timer or an answer.
    private func step() {
        let now = ContinuousClock.now
        let action: Action = state.withLock { state in
            guard !state.ended else { return .none }
            state.timer?.cancel()
            state.timer = nil
            switch state.term.next(at: now) {
            case .wait(let until):
                state.timer = schedule(at: until)
                return .none
            case .renew(let deadline):
                state.term.renewalSent()
                // The answer, or this timer at the deadline, whichever comes first.
                state.timer = schedule(at: deadline)
                return .renew(state.term.lease, askedAt: now, deadline: deadline)
            case .stepDown(let reason):
                state.ended = true
                return .stepDown(reason, state.term.lease.token)
            }
        }
        switch action {
        case .none: break
        case .renew(let lease, let asked, let deadline): renew(lease, askedAt: asked, deadline: deadline)
        case .stepDown(let reason, let token):
            logger.critical(
                "stepping down: \(reason); serving nothing more (exit \(CoordinatorLeadership.steppedDownExitStatus), to be restarted as a standby)",
                metadata: ["token": "\(token)"])
            onStepDown(reason)
            end.succeed(.steppedDown(reason))
        }
    }

    private func renew(_ lease: CoordinatorLease, askedAt asked: ContinuousClock.Instant, deadline: ContinuousClock.Instant) {
        let schedule = state.withLock { $0.term.schedule }
        store.renewal(of: lease, for: schedule.lease).hop(to: eventLoop).whenComplete { [self] result in
            let now = ContinuousClock.now
            let failure: (any Error)? = state.withLock { state in
                guard !state.ended else { return nil }
                switch result {
                case .success(let renewed?): state.term.renewed(renewed, askedAt: asked)
                case .success(nil): state.term.fenced()
                case .failure(let error):
                    state.term.renewalFailed(at: now)
                    return error
                }
                return nil
            }
            if let failure {
                logger.warning(
                    "cannot renew the lease: \(failure)",
                    metadata: ["token": "\(lease.token)", "seconds-to-deadline": "\(LeaseSchedule.seconds(deadline - now))"])
            }
            step()
        }
    }

    /// A timer that steps at `instant` (at once if it has passed).
    private func schedule(at instant: ContinuousClock.Instant) -> Scheduled<Void> {
        let (seconds, attoseconds) = max(.zero, instant - .now).components
        return eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) { [self] in step() }
    }
}
