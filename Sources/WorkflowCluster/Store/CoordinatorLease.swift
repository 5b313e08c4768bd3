import Foundation

/// A store that several coordinators share, where one leads at a time by holding a lease: the
/// ground a standby coordinator stands on.
///
/// The lease is the writer row with an expiry kept by the database's clock (so the coordinators'
/// clocks need not agree). Taking it from nobody or after it expired raises the fencing token
/// (`acquireLease`), and every commit carries that token, so a leader that stalled past its
/// expiry (SIGSTOP, a partition) and was replaced has its late writes refused by the store, not
/// by its own good timing. The leader extends its lease before it runs out (`renewLease`); a
/// replaced leader finds out there (`CoordinatorStoreError.fenced`) or at its next commit, and
/// steps down.
package protocol LeasedCoordinatorStore: CoordinatorStore {
    /// Takes the lease for `duration` if nobody holds a live one (none was ever taken, it
    /// expired, or its holder stepped down), raising the fencing token; otherwise reports the
    /// live lease and changes nothing. Atomic: of any number of coordinators trying at once,
    /// one gets it.
    func acquireLease(holder: String, for duration: Duration) async throws(CoordinatorStoreError) -> LeaseAttempt

    /// Extends `lease` to `duration` from now (the database's now), keeping its token; throws
    /// `.fenced` if another coordinator has taken the store since.
    func renewLease(_ lease: CoordinatorLease, for duration: Duration) async throws(CoordinatorStoreError) -> CoordinatorLease

    /// Gives the lease up at once: a standby may take it without waiting for it to expire, and
    /// the token is raised, so nothing more is accepted from `lease`'s holder. Does nothing if
    /// another coordinator has taken the store since.
    func stepDown(_ lease: CoordinatorLease) async throws(CoordinatorStoreError)
}

/// A lease on a shared store, as one coordinator holds (or sees) it.
package struct CoordinatorLease: Sendable, Equatable {
    /// Who holds it (a coordinator's name for itself, unique per process: host, pid, start).
    package var holder: String
    /// The fencing token the holder's commits carry.
    package var token: FencingToken
    /// When it runs out, by the database's clock.
    package var expiresAt: Date
    /// When the holder must consider it run out, by this process's clock: the duration counted
    /// from *before* the request was sent, so never later than the database's expiry (a
    /// leader that stops leading by then cannot overlap a successor).
    package var validUntil: ContinuousClock.Instant

    /// Creates a lease.
    package init(holder: String, token: FencingToken, expiresAt: Date, validUntil: ContinuousClock.Instant) {
        self.holder = holder
        self.token = token
        self.expiresAt = expiresAt
        self.validUntil = validUntil
    }
}

/// What `acquireLease` found.
package enum LeaseAttempt: Sendable, Equatable {
    /// This coordinator leads now, with this lease.
    case acquired(CoordinatorLease)
    /// Another coordinator holds a live lease (its `validUntil` is meaningless here).
    case heldBy(CoordinatorLease)
}

