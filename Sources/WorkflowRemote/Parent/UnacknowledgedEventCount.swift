/// How many events the parent role's remote children have recorded and their workers not yet
/// acknowledged, summed over every child as their ledgers change.
///
/// The gauge `workflow_remote_events_outstanding` reads it: summing every proxy's ledger on each
/// timer check cost time in proportion to the children held (a coordinator with 100,000 sessions
/// spent most of its loop there), while this costs one addition per event and per
/// acknowledgement. Each proxy adds what its ledger gains and loses while it is live, and takes
/// its remainder out when it stops (a proxy that replaces it adds the events it is handed).
/// Confined to the loop thread, as the proxies are.
final class UnacknowledgedEventCount {
    /// The sum over every live proxy of its unacknowledged events.
    private(set) var total = 0

    /// Adds `delta` (negative: events acknowledged, or a proxy's remainder as it stops).
    func add(_ delta: Int) {
        total += delta
    }
}
