import Metrics
import Prometheus
import WorkflowCluster

/// How a coordinator's gateway serves: where, to whom, which pages, which metrics.
///
/// Resolved by the daemon from `GatewaySettings` (the file, the flag and the environment) before
/// anything starts, so a bad token file stops the coordinator with exit 78 rather than leaving an
/// open port; tests build it directly with port 0 and a registry of their own.
public struct GatewayOptions: Sendable {
    /// Where to listen (port 0: any free port; the bound address is logged and printed).
    public var address: GatewayAddress
    /// The token every API request must carry as `Authorization: Bearer TOKEN`; `nil`: none
    /// (only allowed on a loopback address, which `GatewaySettings.validate` enforces).
    public var bearerToken: String?
    /// The application's static pages and assets (the email browser's page at `/`).
    public var assets: [WebAsset]
    /// The registry `/metrics` exposes; `nil`: no `/metrics` route.
    public var metricsRegistry: PrometheusCollectorRegistry?
    /// Where the gateway's own metrics go (requests, events, stream clients).
    public var metricsFactory: any MetricsFactory
    /// The largest event body accepted, in bytes (larger: 413). A request declaring a larger
    /// body on any route is answered 413 before routing.
    public var maxEventBytes: Int
    /// The bounds on each client connection (timeouts, how many at once).
    public var limits: GatewayLimits
    /// The pages' origins that may call the API across origins (CORS, `gateway.allowed_origins`):
    /// pages served by another coordinator of spread sessions following their session here.
    public var allowedOrigins: [GatewayOrigin]
    /// How the rendering stream paces each client (`gateway.stream_window`,
    /// `gateway.stream_tick_ms`).
    public var stream: GatewayStreamPacing

    /// Creates options. `metricsFactory` defaults to the process's bootstrapped factory (a no-op
    /// one unless the daemon bootstrapped Prometheus); tests pass a factory over their own
    /// registry instead of touching the process-global system.
    public init(
        address: GatewayAddress, bearerToken: String? = nil, assets: [WebAsset] = [],
        metricsRegistry: PrometheusCollectorRegistry? = nil, metricsFactory: (any MetricsFactory)? = nil, maxEventBytes: Int = 1 << 20,
        limits: GatewayLimits = GatewayLimits(), allowedOrigins: [GatewayOrigin] = [], stream: GatewayStreamPacing = GatewayStreamPacing()
    ) {
        self.stream = stream
        self.limits = limits
        self.allowedOrigins = allowedOrigins
        self.address = address
        self.bearerToken = bearerToken
        self.assets = assets
        self.metricsRegistry = metricsRegistry
        self.metricsFactory = metricsFactory ?? MetricsSystem.factory
        self.maxEventBytes = maxEventBytes
    }
}
