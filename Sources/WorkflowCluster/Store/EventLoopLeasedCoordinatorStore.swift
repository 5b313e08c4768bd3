import NIOCore

/// A leased store whose renewals are sent and answered on an event loop, so the leader's keeper
/// (`LeaseKeeper`) drives them there, with no task of the process's concurrency pool in between:
/// a pool busy with the coordinator's own work cannot delay a renewal past its deadline.
package protocol EventLoopLeasedCoordinatorStore: LeasedCoordinatorStore {
    /// The event loop renewals are answered on (the lease connection's).
    var leaseEventLoop: any EventLoop { get }
    /// Completes when the lease's connection has closed (lost, or closed by the store).
    var leaseConnectionClosed: EventLoopFuture<Void> { get }
    /// One renewal of `lease` for `duration`, answered on `leaseEventLoop`: the renewed lease,
    /// or `nil` if another coordinator has taken the store since (fenced).
    func renewal(of lease: CoordinatorLease, for duration: Duration) -> EventLoopFuture<CoordinatorLease?>
}
