import Metrics

/// The directory's metrics: `workflow_sessions{state}` and the transitions' counters.
struct SessionMetrics: Sendable {
    let active: Gauge
    let passivatedNow: Gauge
    let created: Counter
    let passivated: Counter
    let reactivated: Counter
    let ended: Counter

    init(factory: any MetricsFactory) {
        active = Gauge(label: "workflow_sessions", dimensions: [("state", "active")], factory: factory)
        passivatedNow = Gauge(label: "workflow_sessions", dimensions: [("state", "passivated")], factory: factory)
        created = Counter(label: "workflow_sessions_created_total", factory: factory)
        passivated = Counter(label: "workflow_sessions_passivated_total", factory: factory)
        reactivated = Counter(label: "workflow_sessions_reactivated_total", factory: factory)
        ended = Counter(label: "workflow_sessions_ended_total", factory: factory)
    }
}
