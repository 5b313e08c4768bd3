import Metrics

/// The remote runtime's metrics, created once per runtime from its configuration's factory.
///
/// Names follow Prometheus conventions (`_total` counters, `_seconds`, `_bytes`) and carry the
/// runtime's name as the `node` dimension, so a scrape of a process tells its roles apart.
/// Recorded on the loop thread at the points the drivers already pass; never on a hot path
/// more than once per message.
struct RemoteRuntimeMetrics {
    let eventsSent: Counter
    let eventsApplied: Counter
    let childrenHosted: Meter
    let eventsReplayed: Counter
    let outputsReceived: Counter
    let renderingsReceived: Counter
    let bytesIn: Counter
    let bytesOut: Counter
    let workersJoined: Counter
    let workersLeft: Counter
    let failovers: Counter
    let handovers: Counter
    let rebalanceMoves: Counter
    let refusedPeers: Counter
    let eventsOutstanding: Meter
    let workersConnected: Meter
    let roundTrip: Timer

    init(node: String, factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        let dimensions = [("node", node)]
        func counter(_ label: String) -> Counter { Counter(label: label, dimensions: dimensions, factory: factory) }
        eventsSent = counter("workflow_remote_events_sent_total")
        eventsReplayed = counter("workflow_remote_events_replayed_total")
        eventsApplied = counter("workflow_remote_events_applied_total")
        childrenHosted = Meter(label: "workflow_remote_children_hosted", dimensions: dimensions, factory: factory)
        outputsReceived = counter("workflow_remote_outputs_received_total")
        renderingsReceived = counter("workflow_remote_renderings_received_total")
        bytesIn = counter("workflow_remote_received_bytes_total")
        bytesOut = counter("workflow_remote_sent_bytes_total")
        workersJoined = counter("workflow_remote_workers_joined_total")
        workersLeft = counter("workflow_remote_workers_left_total")
        failovers = counter("workflow_remote_failovers_total")
        handovers = counter("workflow_remote_handovers_total")
        rebalanceMoves = counter("workflow_remote_rebalance_moves_total")
        refusedPeers = counter("workflow_remote_refused_peers_total")
        eventsOutstanding = Meter(label: "workflow_remote_events_outstanding", dimensions: dimensions, factory: factory)
        workersConnected = Meter(label: "workflow_remote_workers_connected", dimensions: dimensions, factory: factory)
        roundTrip = Timer(label: "workflow_remote_round_trip_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
    }
}
