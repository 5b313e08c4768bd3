import Metrics

/// The gateway's own metrics: HTTP requests by route and status, events posted by result, the
/// rendering streams and client connections open now, and connections the gateway closed.
struct GatewayMetrics: Sendable {
    let factory: any MetricsFactory
    let streamClients: Meter
    let connections: Meter
    /// `workflow_gateway_events_total{result="sent"}`, made once: the result of nearly every
    /// event (a counter made per event costs a lookup in the registry under its lock).
    private let eventsSent: Counter

    init(factory: any MetricsFactory) {
        self.factory = factory
        eventsSent = Counter(label: "workflow_gateway_events_total", dimensions: [("result", "sent")], factory: factory)
        streamClients = Meter(label: "workflow_gateway_stream_clients", factory: factory)
        connections = Meter(label: "workflow_gateway_connections", factory: factory)
    }

    /// Counts one connection the gateway closed on its own, by reason (`header-timeout`,
    /// `connection-limit`, `too-large`, `bad-request`, …).
    func connectionClosed(reason: String) {
        Counter(label: "workflow_gateway_connections_closed_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// Counts one answered request.
    func request(route: String, status: Int) {
        Counter(label: "workflow_gateway_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            .increment()
    }

    /// Counts one posted event by its result (`sent`, `unknown-token`, …).
    func event(result: String) {
        if result == "sent" { return eventsSent.increment() }
        Counter(label: "workflow_gateway_events_total", dimensions: [("result", result)], factory: factory).increment()
    }
}
