/// The session leases one coordinator holds in spread mode, and when each must be considered
/// run out by this process's clock: the bookkeeping of `SessionDirectory`, a value so that its
/// rules are tested without a database.
///
/// A lease counts from *before* the request that took or renewed it was sent, so this process
/// never considers a lease live after the database does. A renewal answers the sessions the
/// coordinator still holds; one whose taking was answered before the renewal was sent, and that
/// is missing from its answer (or held under another token), is lost: another coordinator took
/// it. (One taken while the renewal was under way may be missing from it without being lost.)
package struct SessionLeaseBook: Sendable, Equatable {
    /// One held lease.
    package struct Held: Sendable, Equatable {
        /// The token its commits carry.
        package var token: FencingToken
        /// When it was taken or last renewed plus the lease: past it, it may be another's.
        package var validUntil: ContinuousClock.Instant
        /// When the answer that took it came.
        package var answeredAt: ContinuousClock.Instant
    }

    /// How long a lease lasts.
    package let lease: Duration
    package private(set) var held: [SessionID: Held] = [:]

    package init(lease: Duration) {
        self.lease = lease
    }

    /// How often the leases are renewed: three times per lease, so one renewal may fail (or be
    /// slow) without losing them.
    package var renewalInterval: Duration { lease / 3 }

    /// The token of `id`'s lease, if held.
    package func token(of id: SessionID) -> FencingToken? { held[id]?.token }

    /// `id`'s lease was taken with `token` by a request sent at `askedAt` and answered at
    /// `answeredAt`.
    package mutating func acquired(_ id: SessionID, token: FencingToken, askedAt: ContinuousClock.Instant, answeredAt: ContinuousClock.Instant) {
        held[id] = Held(token: token, validUntil: askedAt + lease, answeredAt: answeredAt)
    }

    /// Forgets `id`'s lease (given up, or the session ended); returns its token.
    @discardableResult
    package mutating func remove(_ id: SessionID) -> FencingToken? {
        held.removeValue(forKey: id)?.token
    }

    /// A renewal sent at `askedAt` answered `renewed`: those are extended; those whose taking was
    /// answered before `askedAt` and that it did not renew under their token are lost, removed
    /// and returned.
    package mutating func renewed(_ renewed: [SessionID: FencingToken], askedAt: ContinuousClock.Instant) -> [SessionID] {
        var lost: [SessionID] = []
        for (id, lease) in held {
            if renewed[id] == lease.token {
                held[id]?.validUntil = max(lease.validUntil, askedAt + self.lease)
            } else if lease.answeredAt < askedAt {
                lost.append(id)
            }
        }
        for id in lost { held.removeValue(forKey: id) }
        return lost.sorted { $0.text < $1.text }
    }

    /// The leases that ran out by `now` (no renewal reached the database in time): removed and
    /// returned.
    package mutating func expired(now: ContinuousClock.Instant) -> [SessionID] {
        let expired = held.filter { $0.value.validUntil <= now }.keys.sorted { $0.text < $1.text }
        for id in expired { held.removeValue(forKey: id) }
        return expired
    }
}
