/// The times of a coordinator's lease, all derived from its length, so one setting
/// (`store.lease_ms`) says how quickly a standby takes over and how often the leader writes to
/// keep it.
///
/// The leader renews every fifth of the lease and stops leading a fifth of the lease *before*
/// its own measure of the expiry (`CoordinatorLease.validUntil`, counted from before its request
/// left, so never later than the database's): a leader whose renewals stop getting through
/// (a partition, a database that stalls, a process frozen by SIGSTOP) has stopped serving by the
/// time a standby can take the lease, and between a leader's last renewal and its deadline there
/// are three more tries. A standby asks for the lease every tenth of it.
package struct LeaseSchedule: Sendable, Equatable {
    /// How long one acquisition or renewal lasts, by the database's clock.
    package var lease: Duration

    /// A schedule for leases of `lease`.
    package init(lease: Duration) {
        self.lease = lease
    }

    /// How often the leader renews.
    package var renewalInterval: Duration { lease / 5 }
    /// How long before the lease's end (by this process's clock) the leader stops leading.
    package var margin: Duration { lease / 5 }
    /// How often a standby asks for the lease.
    package var standbyInterval: Duration { lease / 10 }
    /// How soon a failed renewal is tried again.
    package var retryInterval: Duration { lease / 20 }

    /// The moment the holder of `lease` must have stopped leading, by this process's clock.
    package func deadline(of lease: CoordinatorLease) -> ContinuousClock.Instant {
        lease.validUntil - margin
    }

    /// `duration` in seconds, as the log shows it.
    package static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
