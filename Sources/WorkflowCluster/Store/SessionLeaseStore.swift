import Foundation

/// A shared store whose sessions are spread over several coordinators (`sessions.spread_lease_ms`):
/// each session is owned by one coordinator at a time.
///
/// Ownership has two levels, so that what a coordinator renews does not grow with the sessions
/// it holds. A coordinator holds a *term* (`SessionLeaseTerm`): one row with its name, its
/// advertised gateway URL (where a request that reaches another coordinator is redirected) and
/// an expiry by the database's clock, renewed by one statement however many sessions it owns. A
/// session's lease is a row beside its checkpoint naming the term that holds it and a fencing
/// token that rises with every new owner; it is live while that term is and it was not given up.
/// Every write of the session's checkpoint carries its owner's token and is refused once another
/// coordinator has taken the session (`CoordinatorStoreError.fenced`), so a deposed owner that
/// wakes up (SIGSTOP, a partition) cannot overwrite its successor's state.
///
/// A session changes hands only when its lease is given up by its holder (a passivation, a
/// stop) or when the holder's term ends (it was not renewed in time): a coordinator whose term
/// renewal succeeds still owns every session it took under that term.
package protocol SessionLeaseStore: CoordinatorStore {
    /// Starts a new term for `holder` (advertising `gateway`), live for `duration`; ends any live
    /// term `holder` had, so the sessions it owned under it may be taken at once (by `holder` too,
    /// with a higher token).
    func beginSessionLeaseTerm(holder: String, gateway: String, for duration: Duration) async throws(CoordinatorStoreError) -> SessionLeaseTerm

    /// Extends `term` to `duration` from the database's now, if it is still live; `false` if it
    /// ended (ran out, or a newer term of its holder began): every session lease taken under it
    /// may then be another coordinator's, and none is revived.
    func renewSessionLeaseTerm(_ term: SessionLeaseTerm, for duration: Duration) async throws(CoordinatorStoreError) -> Bool

    /// Ends `term` at once (its coordinator stops): every session it holds may be taken by
    /// another coordinator at its next request, without a statement per session.
    func endSessionLeaseTerm(_ term: SessionLeaseTerm) async throws(CoordinatorStoreError)

    /// Takes the lease of session `id` under `term`: if it is new (`creating`: a session being
    /// created, with no checkpoint yet), if it was given up or its term ended (the token rises),
    /// or if `term` holds it already (the token stays). A session the store holds no checkpoint
    /// of (never created, or ended) is `.noSuchSession`, unless `creating`.
    func acquireSessionLease(_ id: SessionID, term: SessionLeaseTerm, creating: Bool) async throws(CoordinatorStoreError) -> SessionLeaseAttempt

    /// Gives session `id`'s lease up at once (it was passivated, or this coordinator stops), so
    /// another coordinator may take it without waiting; does nothing if `token` is no longer
    /// its owner's.
    func releaseSessionLease(_ id: SessionID, token: FencingToken) async throws(CoordinatorStoreError)
}

/// One coordinator's term on a `SessionLeaseStore`: the session leases it takes are live while
/// the term is.
package struct SessionLeaseTerm: Sendable, Hashable, CustomStringConvertible {
    /// The term's number, unique in the store (never reused, whatever the holder).
    package var number: Int64
    /// The coordinator's name in the store.
    package var holder: String

    /// A term as the store numbered it.
    package init(number: Int64, holder: String) {
        self.number = number
        self.holder = holder
    }

    package var description: String { "term \(number) of \(holder)" }
}

/// What `SessionLeaseStore.acquireSessionLease` found.
package enum SessionLeaseAttempt: Sendable, Equatable {
    /// This coordinator owns the session now; its commits carry this token.
    case acquired(FencingToken)
    /// Another coordinator holds a live lease on it: requests go to its gateway.
    case heldBy(holder: String, gateway: String)
    /// The store holds no such session (never created, or ended).
    case noSuchSession
    /// The term asked under is no longer live: nothing was taken; a new term must begin.
    case termEnded
}
