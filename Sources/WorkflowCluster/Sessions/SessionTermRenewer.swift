import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Renews a spread coordinator's session lease term entirely on an event loop, as `LeaseKeeper`
/// keeps the leader's lease: its timer is the loop's scheduled task and each renewal a future
/// answered on the loop, so no task of the concurrency pool stands between a renewal's due time,
/// its sending and its answer. A pool saturated by the coordinator's own work (render passes,
/// commits, HTTP) therefore no longer lets the term lapse in the database.
///
/// It decides nothing: it records the latest renewal that succeeded (the moment it was asked,
/// from which the term counts) or that the store said the term ended, and the directory reads
/// that (`latest()`) into its `SessionLifecycle` before every decision that depends on the
/// term (taking a lease, the periodic check that stops the sessions of a lapsed term). One
/// renewal is in flight at a time; a renewal not answered by the next one's due time is not
/// waited for (its late answer still counts, from when it was asked).
package final class SessionTermRenewer: Sendable {
    /// What the renewals found for the term being renewed.
    package struct Report: Sendable, Equatable {
        /// The term renewed.
        package var term: SessionLeaseTerm
        /// When the latest renewal that succeeded was asked (`nil`: none yet).
        package var renewedAt: ContinuousClock.Instant?
        /// The store answered that the term ended.
        package var ended: Bool
    }

    private struct State: Sendable {
        var report: Report?
        var inFlight = false
        var timer: Scheduled<Void>?
        var stopped = false
    }

    private let eventLoop: any EventLoop
    private let interval: Duration
    private let renew: @Sendable (SessionLeaseTerm) -> EventLoopFuture<Bool>
    private let logger: Logger
    private let state: Mutex<State>

    /// A renewer sending `renew` every `interval` on `eventLoop`; nothing runs until `keep(_:)`.
    package init(
        eventLoop: any EventLoop, interval: Duration, logger: Logger, renew: @escaping @Sendable (SessionLeaseTerm) -> EventLoopFuture<Bool>
    ) {
        self.eventLoop = eventLoop
        self.interval = interval
        self.renew = renew
        self.logger = logger
        self.state = Mutex(State())
    }

    /// A renewer of `spread`'s term, every third of its lease: on the store's lease event loop
    /// when it has one (`EventLoopSessionLeaseStore`), else on a loop of NIO's shared group,
    /// each renewal then a task of its own.
    package convenience init(spread: SessionSpread, logger: Logger) {
        let lease = spread.settings.lease
        let interval = SessionLeaseBook(lease: lease).renewalInterval
        if let store = spread.store as? any EventLoopSessionLeaseStore {
            self.init(eventLoop: store.leaseEventLoop, interval: interval, logger: logger) { store.sessionTermRenewal(of: $0, for: lease) }
        } else {
            let (store, eventLoop) = (spread.store, MultiThreadedEventLoopGroup.singleton.any())
            self.init(eventLoop: eventLoop, interval: interval, logger: logger) { term in
                eventLoop.makeFutureWithTask { try await store.renewSessionLeaseTerm(term, for: lease) }
            }
        }
    }

    /// Renews `term` from now on (a new term began; the one before is no longer renewed).
    package func keep(_ term: SessionLeaseTerm) {
        let changed = state.withLock { state -> Bool in
            guard !state.stopped, state.report?.term != term else { return false }
            state.report = Report(term: term, renewedAt: nil, ended: false)
            state.timer?.cancel()
            state.timer = nil
            return true
        }
        if changed { eventLoop.execute { [self] in schedule() } }
    }

    /// What the renewals found for the term being renewed, if any.
    package func latest() -> Report? {
        state.withLock { $0.report }
    }

    /// Stops renewing (the coordinator stops).
    package func stop() {
        state.withLock { state in
            state.stopped = true
            state.timer?.cancel()
            state.timer = nil
        }
    }

    /// Schedules the next renewal an interval from now; on the loop.
    private func schedule() {
        let (seconds, attoseconds) = interval.components
        let timer = eventLoop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) { [self] in renewNow() }
        let kept = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.timer?.cancel()
            state.timer = timer
            return true
        }
        if !kept { timer.cancel() }
    }

    /// Sends one renewal (unless one is in flight, or the term ended) and schedules the next.
    private func renewNow() {
        let term: SessionLeaseTerm? = state.withLock { state in
            guard !state.stopped, let report = state.report, !report.ended, !state.inFlight else { return nil }
            state.inFlight = true
            return report.term
        }
        if let term {
            let asked = ContinuousClock.now
            renew(term).hop(to: eventLoop).whenComplete { [self] result in
                let failure: (any Error)? = state.withLock { state in
                    state.inFlight = false
                    guard state.report?.term == term else { return nil }
                    switch result {
                    case .success(true):
                        if state.report?.renewedAt.map({ $0 < asked }) ?? true { state.report?.renewedAt = asked }
                    case .success(false):
                        state.report?.ended = true
                    case .failure(let error):
                        return error
                    }
                    return nil
                }
                if let failure { logger.warning("cannot renew the session lease term: \(failure)", metadata: ["term": "\(term.number)"]) }
            }
        }
        schedule()
    }
}
