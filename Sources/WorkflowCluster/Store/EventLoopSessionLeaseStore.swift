import NIOCore

/// A spread store whose session lease term renewals are sent and answered on an event loop, so
/// that `SessionTermRenewer` drives them there with no task of the process's concurrency pool in
/// between: a pool busy with the coordinator's own work cannot delay a renewal until the term
/// lapses (as `EventLoopLeasedCoordinatorStore` does for the leader's lease).
package protocol EventLoopSessionLeaseStore: SessionLeaseStore {
    /// The event loop renewals are answered on.
    var leaseEventLoop: any EventLoop { get }
    /// One renewal of `term` for `duration`, answered on `leaseEventLoop`: `false` if the term
    /// ended (as `renewSessionLeaseTerm`).
    func sessionTermRenewal(of term: SessionLeaseTerm, for duration: Duration) -> EventLoopFuture<Bool>
}
