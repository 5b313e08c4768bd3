import Logging
import OTel
import ServiceLifecycle
import Tracing
import WorkflowCluster

/// A daemon's tracer, made from its `tracing.*` settings (docs/OPERATIONS.md, "Tracing"): an
/// OTLP/HTTP exporter to the configured collector, and the service that batches and exports the
/// spans, run beside the daemon's own.
///
/// Made here, in the commands, and passed down explicitly (`RemoteRuntimeConfiguration.tracer`):
/// nothing bootstraps the process-global `InstrumentationSystem`, so a test's in-process daemons
/// never share a tracer, and with tracing off no tracer exists at all.
struct DaemonTracing {
    /// The tracer the runtime, its sessions and the gateway trace with.
    var tracer: any Tracer
    /// Batches and exports the spans; runs beside the daemon (and flushes when it stops).
    var service: any Service

    /// The tracer `settings` ask for, or `nil` when `tracing.otlp_endpoint` is not set.
    ///
    /// `serviceName` is the OTLP resource's `service.name` (the daemon), `instance` its
    /// `service.instance.id` (a worker's name). The standard `OTEL_*` variables (e.g.
    /// `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_SERVICE_NAME`) still adjust what they name.
    static func make(_ settings: TracingSettings, serviceName: String, instance: String, logger: Logger) throws -> DaemonTracing? {
        guard let url = settings.tracesURL else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.resourceAttributes["service.instance.id"] = instance
        configuration.diagnosticLogger = .custom(logger)
        configuration.propagators = [.traceContext]
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = url
        configuration.traces.otlpExporter.protocol = settings.otlpProtocol == .json ? .httpJSON : .httpProtobuf
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        logger.info("tracing: spans exported over OTLP/HTTP", metadata: ["url": "\(url)", "protocol": "\(settings.otlpProtocol.rawValue)"])
        return DaemonTracing(tracer: backend.factory, service: backend.service)
    }
}
