import Metrics

/// The gateway's own metrics: HTTP requests by route and status, events posted by result, and
/// the rendering streams open now.
struct GatewayMetrics: Sendable {
    let factory: any MetricsFactory
    let streamClients: Meter

    init(factory: any MetricsFactory) {
        self.factory = factory
        streamClients = Meter(label: "workflow_gateway_stream_clients", factory: factory)
    }

    /// Counts one answered request.
    func request(route: String, status: Int) {
        Counter(label: "workflow_gateway_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            .increment()
    }

    /// Counts one posted event by its result (`sent`, `unknown-token`, …).
    func event(result: String) {
        Counter(label: "workflow_gateway_events_total", dimensions: [("result", result)], factory: factory).increment()
    }
}
