/// The leader's side of its lease, as a value: from the times it is given (it reads no clock),
/// it says when to renew, how long a renewal may take, and when to step down.
///
/// Driven by `LeaseKeeper`, which does the I/O on its own event loop: it asks `next(at:)` what to
/// do, does it, says a renewal left (`renewalSent`) and reports back (`renewed`,
/// `renewalFailed`, `fenced`), or asks again when a timer fires. The rule it keeps is the one the
/// at-most-one-writer argument needs (docs/ARCHITECTURE.md, "A standby coordinator"): the
/// leader never serves past `LeaseSchedule.deadline(of:)` of the latest lease it holds, which is
/// before any standby can take the lease; the fencing token covers whatever it does late anyway
/// (a frozen process cannot look at a clock).
package struct LeaderTerm: Sendable, Equatable {
    /// What the leader does next.
    package enum Step: Sendable, Equatable {
        /// Nothing until this moment.
        case wait(until: ContinuousClock.Instant)
        /// Renew the lease now (then `renewalSent`); a renewal not answered by `deadline`
        /// counts as lost.
        case renew(deadline: ContinuousClock.Instant)
        /// Stop leading at once: the lease may be gone (its deadline passed) or is (fenced).
        case stepDown(StepDownReason)
    }

    /// Why a leader steps down.
    package enum StepDownReason: Sendable, Equatable, CustomStringConvertible {
        /// No renewal got through before the leader's deadline.
        case deadlinePassed
        /// The store says another coordinator has taken the lease.
        case fenced
        /// The leader's connection for its lease closed: a standby may learn at once that its
        /// session ended (`PostgresCoordinatorStore`'s advisory lock) and take the lease.
        case leaseConnectionLost

        /// In words, for the log.
        package var description: String {
            switch self {
            case .deadlinePassed: "the lease could not be renewed before its deadline"
            case .fenced: "another coordinator has taken the lease"
            case .leaseConnectionLost: "the connection that holds the lease closed"
            }
        }
    }

    /// The lease held now (the latest renewal's).
    package private(set) var lease: CoordinatorLease
    /// The times.
    package let schedule: LeaseSchedule
    /// When the next renewal is due.
    package private(set) var renewalDue: ContinuousClock.Instant
    /// Set once the store has fenced this leader.
    package private(set) var isFenced = false
    /// Set while a renewal is on its way: one at a time (a second would only queue behind the
    /// first on the connection), so the next step is the deadline until it is answered.
    package private(set) var isRenewing = false
    /// Set once the connection holding the lease has closed.
    package private(set) var isConnectionLost = false

    /// The term starting with `lease`, taken at `now`.
    package init(lease: CoordinatorLease, schedule: LeaseSchedule, now: ContinuousClock.Instant) {
        self.lease = lease
        self.schedule = schedule
        self.renewalDue = now + schedule.renewalInterval
    }

    /// The moment this leader must have stopped leading.
    package var deadline: ContinuousClock.Instant { schedule.deadline(of: lease) }

    /// What to do at `now`.
    package func next(at now: ContinuousClock.Instant) -> Step {
        if isFenced { return .stepDown(.fenced) }
        if isConnectionLost { return .stepDown(.leaseConnectionLost) }
        if now >= deadline { return .stepDown(.deadlinePassed) }
        if isRenewing { return .wait(until: deadline) }
        if now >= renewalDue { return .renew(deadline: deadline) }
        return .wait(until: min(renewalDue, deadline))
    }

    /// The renewal `next(at:)` asked for has been sent.
    package mutating func renewalSent() {
        isRenewing = true
    }

    /// A renewal asked for at `askedAt` got `renewed`: the deadline moves to the later of the
    /// two leases' (a late answer to an earlier request never shortens it) and the next renewal
    /// is due an interval after the request.
    package mutating func renewed(_ renewed: CoordinatorLease, askedAt: ContinuousClock.Instant) {
        isRenewing = false
        guard renewed.token == lease.token else {
            isFenced = true
            return
        }
        if renewed.validUntil > lease.validUntil { lease = renewed }
        renewalDue = max(renewalDue, askedAt + schedule.renewalInterval)
    }

    /// A renewal failed at `now` for a reason other than fencing (the database did not answer,
    /// the connection broke): tried again soon, while the deadline allows.
    package mutating func renewalFailed(at now: ContinuousClock.Instant) {
        isRenewing = false
        renewalDue = now + schedule.retryInterval
    }

    /// The store refused the renewal: another coordinator leads.
    package mutating func fenced() {
        isRenewing = false
        isFenced = true
    }

    /// The connection that holds the lease closed: whoever holds the lease now, this leader
    /// may not (a standby watching that connection's session may already have taken it).
    package mutating func connectionLost() {
        isConnectionLost = true
    }
}
