/// How long and how many: the bounds the gateway puts on each client connection, so a slow or
/// hostile client cannot hold a descriptor (or a request) open indefinitely.
///
/// Read from the configuration file's `gateway` section (`header_timeout_ms`, `body_timeout_ms`,
/// `idle_timeout_ms`, `max_connections`), the environment (`WORKFLOW_GATEWAY_HEADER_TIMEOUT_MS`,
/// …) and the coordinator's flags (`--gateway-header-timeout-ms`, …).
public struct GatewayLimits: Sendable, Equatable {
    /// The longest a request head may take to arrive: from the connection's opening, or from
    /// the first byte after an answered request (slow-header clients get 408 and are closed).
    public var headerTimeout: Duration
    /// The longest a request body may take to arrive, from its head to its end (a deadline, not
    /// a gap between reads, so a body trickled one byte at a time is closed too).
    public var bodyTimeout: Duration
    /// How long a connection may wait, with nothing asked, for its next request.
    public var idleTimeout: Duration
    /// The most client connections open at once; one more is answered 503 and closed.
    public var maxConnections: Int
    /// How long a closing connection keeps reading (and discarding) what the client still
    /// sends, so the answer it was given is not destroyed by a reset, before it closes fully.
    public var closeLinger: Duration

    /// Creates limits; the defaults suit a gateway behind a reverse proxy or on loopback.
    public init(
        headerTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(60),
        maxConnections: Int = 512, closeLinger: Duration = .seconds(2)
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.closeLinger = closeLinger
    }
}
