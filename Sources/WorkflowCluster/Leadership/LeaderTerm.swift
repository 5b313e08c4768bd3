/// The leader's side of its lease, as a value: from the times it is given (it reads no clock),
/// it says when to renew, how long a renewal may take, and when to step down.
///
/// Driven by `CoordinatorLeadership`, which does the I/O: it asks `next(at:)` what to do, does
/// it, and reports back (`renewed`, `renewalFailed`, `fenced`). The rule it keeps is the one the
/// at-most-one-writer argument needs (docs/ARCHITECTURE.md, "A standby coordinator"): the
/// leader never serves past `LeaseSchedule.deadline(of:)` of the latest lease it holds, which is
/// before any standby can take the lease; the fencing token covers whatever it does late anyway
/// (a frozen process cannot look at a clock).
package struct LeaderTerm: Sendable, Equatable {
    /// What the leader does next.
    package enum Step: Sendable, Equatable {
        /// Nothing until this moment.
        case wait(until: ContinuousClock.Instant)
        /// Renew the lease now; a renewal not answered by `deadline` counts as lost.
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

        /// In words, for the log.
        package var description: String {
            switch self {
            case .deadlinePassed: "the lease could not be renewed before its deadline"
            case .fenced: "another coordinator has taken the lease"
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
        if now >= deadline { return .stepDown(.deadlinePassed) }
        if now >= renewalDue { return .renew(deadline: deadline) }
        return .wait(until: min(renewalDue, deadline))
    }

    /// A renewal asked for at `askedAt` got `renewed`: the deadline moves to the later of the
    /// two leases' (a late answer to an earlier request never shortens it) and the next renewal
    /// is due an interval after the request.
    package mutating func renewed(_ renewed: CoordinatorLease, askedAt: ContinuousClock.Instant) {
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
        renewalDue = now + schedule.retryInterval
    }

    /// The store refused the renewal: another coordinator leads.
    package mutating func fenced() {
        isFenced = true
    }
}
