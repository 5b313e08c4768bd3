import Foundation

/// A shared store whose sessions are spread over several coordinators (`sessions.spread_lease_ms`):
/// each session is owned by one coordinator at a time, by a lease of its own.
///
/// A session's lease is a row beside its checkpoint: its holder, the holder's advertised gateway
/// URL (where a request that reaches another coordinator is redirected), a fencing token that
/// rises with every new owner, and an expiry by the database's clock. Every write of the
/// session's checkpoint carries its owner's token and is refused once another coordinator has
/// taken the session (`CoordinatorStoreError.fenced`), so a deposed owner that wakes up
/// (SIGSTOP, a partition) cannot overwrite its successor's state. A coordinator renews the
/// leases of all its sessions in one statement (`renewSessionLeases`), whatever their number.
public protocol SessionLeaseStore: CoordinatorStore {
    /// Takes the lease of session `id` for `duration` as `holder` (advertising `gateway`): if it
    /// is new (`creating`: a session being created, with no checkpoint yet), if its lease ran out
    /// or was given up (the token rises), or if `holder` holds it already (the token stays).
    /// A session the store holds no checkpoint of (never created, or ended) is `.noSuchSession`,
    /// unless `creating`.
    func acquireSessionLease(_ id: SessionID, holder: String, gateway: String, for duration: Duration, creating: Bool)
        async throws(CoordinatorStoreError) -> SessionLeaseAttempt

    /// Extends, to `duration` from the database's now, every live session lease `holder` still
    /// holds, in one statement; returns them with their tokens (a session missing from the answer
    /// was given up, ran out or was taken by another coordinator: never revived by a renewal).
    func renewSessionLeases(holder: String, for duration: Duration) async throws(CoordinatorStoreError) -> [SessionID: FencingToken]

    /// Gives session `id`'s lease up at once (it was passivated, or this coordinator stops), so
    /// another coordinator may take it without waiting; does nothing if `token` is no longer
    /// its owner's.
    func releaseSessionLease(_ id: SessionID, token: FencingToken) async throws(CoordinatorStoreError)
}

/// What `SessionLeaseStore.acquireSessionLease` found.
public enum SessionLeaseAttempt: Sendable, Equatable {
    /// This coordinator owns the session now; its commits carry this token.
    case acquired(FencingToken)
    /// Another coordinator holds a live lease on it: requests go to its gateway.
    case heldBy(holder: String, gateway: String)
    /// The store holds no such session (never created, or ended).
    case noSuchSession
}
