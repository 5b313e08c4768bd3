import Metrics
import Synchronization

/// The gateway's own metrics: HTTP requests by route and status, events posted by result, the
/// rendering streams and client connections open now, and connections the gateway closed.
struct GatewayMetrics: Sendable {
    let factory: any MetricsFactory
    let streamClients: Meter
    let connections: Meter
    /// `workflow_gateway_events_total{result="sent"}`, made once: the result of nearly every
    /// event (a counter made per event costs a lookup in the registry under its lock).
    private let eventsSent: Counter
    /// `workflow_gateway_requests_total` by route and status, each made once.
    private let requestCounters = RequestCounters()

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

    /// Counts one answered request (`route`: its route's pattern, or `unmatched`).
    func request(route: String, status: Int) {
        requestCounters.counter(route: route, status: status, factory: factory).increment()
    }

    /// Counts one posted event by its result (`sent`, `unknown-token`, …).
    func event(result: String) {
        if result == "sent" { return eventsSent.increment() }
        Counter(label: "workflow_gateway_events_total", dimensions: [("result", result)], factory: factory).increment()
    }
}

/// The request counters made so far, by route pattern and status: a counter made per request
/// cost a lookup in the metrics registry under its lock, with its dimensions' strings built and
/// hashed (about 1 % of a session's creation). Bounded: routes are patterns (or `unmatched`),
/// never a request's own path, and statuses are three digits.
private final class RequestCounters: Sendable {
    private struct Key: Hashable {
        var route: String
        var status: Int
    }
    private let counters = Mutex<[Key: Counter]>([:])

    func counter(route: String, status: Int, factory: any MetricsFactory) -> Counter {
        counters.withLock { counters in
            let key = Key(route: route, status: status)
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "workflow_gateway_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
