/// The session leases one coordinator holds in spread mode, the term they are held under, and
/// when that term must be considered ended by this process's clock: the bookkeeping of
/// `SessionDirectory`, a value so that its rules are tested without a database.
///
/// Every lease is held under the coordinator's one term (`SessionLeaseTerm`), so what is renewed
/// and checked per renewal interval is the term alone, whatever the number of sessions: a
/// renewal's answer, a term's end and a lapse cost O(1) unless they lose the sessions (then each
/// is stopped anyway). A term counts from *before* the request that began or renewed it was
/// sent, so this process never considers it live after the database does.
package struct SessionLeaseBook: Sendable, Equatable {
    /// How long a term lasts unrenewed.
    package let lease: Duration
    /// The term the leases are held under (`nil`: none yet, or it ended).
    package private(set) var term: SessionLeaseTerm?
    /// Past it, the term may have ended in the database: its sessions may be another's.
    package private(set) var validUntil: ContinuousClock.Instant?
    /// The leases held, with the token each session's commits carry.
    package private(set) var held: [SessionID: FencingToken] = [:]

    package init(lease: Duration) {
        self.lease = lease
    }

    /// How often the term is renewed: three times per lease, so one renewal may fail (or be slow)
    /// without losing it.
    package var renewalInterval: Duration { lease / 3 }

    /// The term to take leases under at `now`, if one is live.
    package func liveTerm(now: ContinuousClock.Instant) -> SessionLeaseTerm? {
        guard let term, let validUntil, now < validUntil else { return nil }
        return term
    }

    /// The token of `id`'s lease, if held.
    package func token(of id: SessionID) -> FencingToken? { held[id] }

    /// `term` began by a request sent at `askedAt`. An older term's answer arriving late is
    /// ignored; a newer term loses every lease held under the one before (the store ended it):
    /// those are removed and returned.
    package mutating func began(_ term: SessionLeaseTerm, askedAt: ContinuousClock.Instant) -> [SessionID] {
        if let current = self.term, current.number >= term.number { return [] }
        let lost = loseAll()
        self.term = term
        validUntil = askedAt + lease
        return lost
    }

    /// `id`'s lease was taken with `token` under `term`; `false` (nothing recorded) if `term` is
    /// no longer the one held: the lease is dead in the store, or soon will be.
    package mutating func acquired(_ id: SessionID, token: FencingToken, under term: SessionLeaseTerm) -> Bool {
        guard term == self.term else { return false }
        held[id] = token
        return true
    }

    /// Forgets `id`'s lease (given up, or the session ended); returns its token.
    @discardableResult
    package mutating func remove(_ id: SessionID) -> FencingToken? {
        held.removeValue(forKey: id)
    }

    /// A renewal of `term` sent at `askedAt` succeeded: it is live until `askedAt` plus the lease
    /// (a late answer never shortens what a later renewal extended).
    package mutating func renewed(_ term: SessionLeaseTerm, askedAt: ContinuousClock.Instant) {
        guard term == self.term, let validUntil else { return }
        self.validUntil = max(validUntil, askedAt + lease)
    }

    /// The store answered that `term` ended: every lease held under it is removed and returned.
    package mutating func ended(_ term: SessionLeaseTerm) -> [SessionID] {
        guard term == self.term else { return [] }
        return loseAll()
    }

    /// The term lapsed by `now` (no renewal reached the database in time): every lease is
    /// removed and returned.
    package mutating func expired(now: ContinuousClock.Instant) -> [SessionID] {
        guard term != nil, liveTerm(now: now) == nil else { return [] }
        return loseAll()
    }

    /// Ends the term here (the coordinator stops, having ended it in the store): the leases it
    /// held are removed and returned.
    package mutating func endTerm() -> [SessionID] {
        loseAll()
    }

    private mutating func loseAll() -> [SessionID] {
        let lost = held.keys.sorted { $0.text < $1.text }
        held = [:]
        term = nil
        validUntil = nil
        return lost
    }
}
