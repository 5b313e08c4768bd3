import Tracing

/// W3C trace context (`traceparent`) as it crosses processes in EVENT and OUTPUTS (remote
/// protocol 5): written and read through the tracer's own propagator, so the remote runtime
/// knows no tracing backend and carries whatever context the daemon's tracer makes.
///
/// Only `traceparent` travels (no `tracestate`, no baggage): one short string per traced event
/// is what following one event across processes needs (docs/WIRE-PROTOCOL.md, "Trace context").
package enum TraceParent {
    /// The header name of W3C trace context.
    package static let key = "traceparent"

    /// `context`'s `traceparent` as `tracer` propagates it; `nil` when the context carries no
    /// span (nothing to continue).
    package static func inject(_ context: ServiceContext, with tracer: any Tracer) -> String? {
        var carrier = Carrier()
        tracer.inject(context, into: &carrier, using: CarrierInjector())
        return carrier.traceparent
    }

    /// The context `traceparent` continues, as `tracer` reads it (a context without a span when
    /// the text is not a valid `traceparent`: the next span then starts a trace of its own).
    package static func extract(_ traceparent: String, with tracer: any Tracer) -> ServiceContext {
        var context = ServiceContext.topLevel
        tracer.extract(Carrier(traceparent: traceparent), into: &context, using: CarrierExtractor())
        return context
    }

    /// The one header a traced message carries.
    package struct Carrier: Sendable {
        var traceparent: String?
    }

    struct CarrierInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout Carrier) {
            if key == TraceParent.key { carrier.traceparent = value }
        }
    }

    struct CarrierExtractor: Extractor {
        func extract(key: String, from carrier: Carrier) -> String? {
            key == TraceParent.key ? carrier.traceparent : nil
        }
    }
}
