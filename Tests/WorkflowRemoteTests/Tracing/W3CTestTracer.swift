import InMemoryTracing
import Tracing

/// An in-memory tracer that propagates W3C `traceparent`, as an OpenTelemetry tracer does: the
/// remote runtime carries trace context as `traceparent` only, and `InMemoryTracer` propagates
/// its own keys. Its spans are `InMemoryTracer`'s, read back with `finishedSpans`.
///
/// Its ids are random hexadecimal numbers of W3C's widths, so the tracers of a parent and a
/// worker in one test never make the same span id.
struct W3CTestTracer: Tracer {
    let inner = InMemoryTracer(
        idGenerator: .init(
            nextTraceID: { hex(UInt64.random(in: 1...UInt64.max)) + hex(UInt64.random(in: 1...UInt64.max)) },
            nextSpanID: { hex(UInt64.random(in: 1...UInt64.max)) }))

    var finishedSpans: [FinishedInMemorySpan] { inner.finishedSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
        inner.activeSpan(identifiedBy: context)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Carrier == Extract.Carrier {
        guard let traceparent = extractor.extract(key: "traceparent", from: carrier) else { return }
        let fields = traceparent.split(separator: "-")
        guard fields.count == 4 else { return }
        context.inMemorySpanContext = InMemorySpanContext(traceID: String(fields[1]), spanID: String(fields[2]), parentSpanID: nil)
    }
}

/// `value` as 16 hexadecimal digits.
private func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
