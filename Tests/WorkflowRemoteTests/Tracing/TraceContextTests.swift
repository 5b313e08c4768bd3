import Foundation
import InMemoryTracing
import RemoteTestSupport
import Testing
import Tracing
import WireProtocol
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// Trace context across the remote runtime (remote protocol 5): an event sent inside a span is
/// one trace from the parent's send through the worker's apply, render and flush back to the
/// parent applying that flush; a peer of protocol 4 and a runtime without a tracer see none of it.
@Suite struct TraceContextTests {
    let codec = BinaryWireCodec()

    /// An EVENT's `EventsPayload` as a worker of protocol 4 knows it.
    struct EventsPayloadV4: Codable, Equatable {
        var tokens: [String]
        var tokenIndexes: [UInt32]
        var lengths: [UInt32]
    }

    @Test("an untraced EVENT payload is, byte for byte, the protocol-4 one")
    func untracedPayloadIsProtocol4() throws {
        let payload = EventsPayload(tokens: ["t"], tokenIndexes: [0, 0], lengths: [1, 2])
        let old = EventsPayloadV4(tokens: ["t"], tokenIndexes: [0, 0], lengths: [1, 2])
        #expect(try codec.encode(payload) == codec.encode(old))
    }

    @Test("the trace fields are read apart: EVENT and OUTPUTS headers decode without them, a protocol-4 peer's too")
    func traceFieldsReadApart() throws {
        let events = try codec.encode(EventsPayload(tokens: ["t"], tokenIndexes: [0], lengths: [1], traceparents: ["00-a-b-01"]))
        let decoded = try events.withUnsafeBytes { try codec.decode(EventsPayload.self, from: $0, userInfo: [:]) }
        #expect(decoded.tokens == ["t"] && decoded.tokenIndexes == [0] && decoded.lengths == [1] && decoded.traceparents == nil)
        #expect(try events.withUnsafeBytes { try codec.decode(TraceContextFields.self, from: $0, userInfo: [:]) }.traceparents == ["00-a-b-01"])
        let old = try events.withUnsafeBytes { try codec.decode(EventsPayloadV4.self, from: $0, userInfo: [:]) }
        #expect(old == EventsPayloadV4(tokens: ["t"], tokenIndexes: [0], lengths: [1]))
        let outputs = try codec.encode(
            OutputsPayload(
                causes: [1], ordinals: [0], lengths: [2], snapshot: nil, continues: false, renderingSequence: 3, released: true,
                traceparent: "00-a-c-01"))
        let flush = try outputs.withUnsafeBytes { try codec.decode(OutputsPayload.self, from: $0, userInfo: [:]) }
        #expect(flush.causes == [1] && flush.lengths == [2] && flush.renderingSequence == 3 && flush.released == true && flush.traceparent == nil)
        #expect(try outputs.withUnsafeBytes { try codec.decode(TraceContextFields.self, from: $0, userInfo: [:]) }.traceparent == "00-a-c-01")
    }

    @Test("one event, one trace: the parent's send, the worker's apply, render and flush, the parent applying the flush")
    func oneTraceAcrossParentAndWorker() async throws {
        let parentTracer = W3CTestTracer()
        let workerTracer = W3CTestTracer()
        var parentConfiguration = RemoteRuntimeConfiguration(name: "traced-parent")
        parentConfiguration.listenEndpoint = uniqueEndpoint("traced")
        parentConfiguration.heartbeatInterval = .milliseconds(100)
        parentConfiguration.heartbeatLiveness = 20
        parentConfiguration.tracer = parentTracer
        let parent = try RemoteRuntime(configuration: parentConfiguration)
        var workerConfiguration = RemoteRuntimeConfiguration(name: "traced-worker")
        workerConfiguration.parentEndpoint = parent.listenEndpoint
        workerConfiguration.registry = remoteTestRegistry
        workerConfiguration.heartbeatInterval = .milliseconds(100)
        workerConfiguration.heartbeatLiveness = 20
        workerConfiguration.tracer = workerTracer
        let worker = try RemoteRuntime(configuration: workerConfiguration)
        // Placed once the worker is there: a sink of a child not placed yet refuses events.
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("traced-worker")), loop: parent)

        let screen = try await rendering(of: host, "the counter rendered by the worker") { $0["c"]?.count == 0 }
        let click = parentTracer.startSpan("click")
        let accepted = ServiceContext.$current.withValue(click.context) { screen["c"]!.onIncrement.send(1) }
        click.end()
        #expect(accepted)
        try await rendering(of: host, "the count after the event") { $0["c"]?.count == 1 }
        try await eventually("the parent's span of the applied flush") {
            parentTracer.finishedSpans.contains { $0.operationName == SpanNames.applyFlush }
        }

        let clickSpan = try #require(parentTracer.finishedSpans.first { $0.operationName == "click" })
        func span(_ name: String, of tracer: W3CTestTracer) throws -> FinishedInMemorySpan {
            try #require(tracer.finishedSpans.first { $0.operationName == name }, "a \(name) span")
        }
        let send = try span(SpanNames.sendEvent, of: parentTracer)
        let apply = try span(SpanNames.applyEvent, of: workerTracer)
        let render = try span(SpanNames.render, of: workerTracer)
        let flush = try span(SpanNames.flush, of: workerTracer)
        let applyFlush = try span(SpanNames.applyFlush, of: parentTracer)
        for span in [send, apply, render, flush, applyFlush] {
            #expect(span.traceID == clickSpan.traceID, "\(span.operationName) in the click's trace")
        }
        #expect(send.parentSpanID == clickSpan.spanID)
        #expect(apply.parentSpanID == send.spanID)
        #expect(render.parentSpanID == apply.spanID)
        #expect(flush.parentSpanID == apply.spanID)
        #expect(applyFlush.parentSpanID == flush.spanID)
        #expect(send.kind == .producer && apply.kind == .consumer)
        if case .string(let name)? = send.attributes.get(SpanNames.workerAttribute) {
            #expect(name == "traced-worker")
        } else {
            Issue.record("the send span names its worker: \(send.attributes)")
        }
        // The gateway's push continues the applied flush.
        #expect(parent.takeTracedFlushContext()?.inMemorySpanContext?.spanID == applyFlush.spanID)
        #expect(parent.takeTracedFlushContext() == nil, "taken once")

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// A runtime of the tests' workflows named `name`, tracing with `tracer`, connected to
    /// `parent` and (with `listen`) a parent itself.
    func tracedRuntime(_ name: String, tracer: W3CTestTracer, parent: String? = nil, listen: String? = nil) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name)
        configuration.parentEndpoint = parent
        configuration.listenEndpoint = listen
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 20
        configuration.tracer = tracer
        return try RemoteRuntime(configuration: configuration)
    }

    @Test("through a nested worker: the middle applies the event and passes it on in the same trace, the leaf continues it")
    func oneTraceThroughANestedWorker() async throws {
        let (rootTracer, middleTracer, leafTracer) = (W3CTestTracer(), W3CTestTracer(), W3CTestTracer())
        let root = try tracedRuntime("traced-root", tracer: rootTracer, listen: uniqueEndpoint("traced-root"))
        let middleEndpoint = uniqueEndpoint("traced-middle")
        let middle = try tracedRuntime("traced-middle", tracer: middleTracer, parent: root.listenEndpoint, listen: middleEndpoint)
        let leaf = try tracedRuntime("traced-leaf", tracer: leafTracer, parent: middleEndpoint)
        await root.waitForWorkers(count: 1)
        await middle.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: NestedCountingRoot(middlePlacement: .worker("traced-middle")), loop: root)

        let screen = try await rendering(of: host, "the leaf's counter") { $0.middle.counter.count == 0 }
        let click = rootTracer.startSpan("click")
        let accepted = ServiceContext.$current.withValue(click.context) { screen.middle.counter.onIncrement.send(1) }
        click.end()
        #expect(accepted)
        try await rendering(of: host, "the event at every level") { $0.middle.counter.count == 1 && $0.rootSeen == 1 }
        try await eventually("the middle's span of the leaf's flush") {
            middleTracer.finishedSpans.contains { $0.operationName == SpanNames.applyFlush }
        }

        func span(_ name: String, of tracer: W3CTestTracer) throws -> FinishedInMemorySpan {
            try #require(tracer.finishedSpans.first { $0.operationName == name }, "a \(name) span")
        }
        let clickSpan = try span("click", of: rootTracer)
        let rootSend = try span(SpanNames.sendEvent, of: rootTracer)
        let middleApply = try span(SpanNames.applyEvent, of: middleTracer)
        let middleSend = try span(SpanNames.sendEvent, of: middleTracer)
        let leafApply = try span(SpanNames.applyEvent, of: leafTracer)
        let leafFlush = try span(SpanNames.flush, of: leafTracer)
        let middleApplyFlush = try span(SpanNames.applyFlush, of: middleTracer)
        for span in [rootSend, middleApply, middleSend, leafApply, leafFlush, middleApplyFlush] {
            #expect(span.traceID == clickSpan.traceID, "\(span.operationName) in the click's trace")
        }
        #expect(middleApply.parentSpanID == rootSend.spanID)
        #expect(middleSend.parentSpanID == middleApply.spanID, "passed on inside the middle's apply")
        #expect(leafApply.parentSpanID == middleSend.spanID)
        #expect(leafFlush.parentSpanID == leafApply.spanID)
        #expect(middleApplyFlush.parentSpanID == leafFlush.spanID)

        await host.stop()
        await leaf.shutdown()
        await middle.shutdown()
        await root.shutdown()
    }

    @Test(
        "the EVENT says its events' traceparent only with a tracer and to a worker of protocol 5",
        arguments: [(traced: false, version: 5), (traced: true, version: 4), (traced: true, version: 5)])
    func traceparentOnlyWhenTracedAndNegotiated(traced: Bool, version: Int) async throws {
        let tracer = W3CTestTracer()
        let bare = try await BareWorker(
            "traceparent-\(traced)-\(version)", protocolVersions: Array(4...version), tracer: traced ? tracer : nil)
        let start = bare.start
        try bare.socket.send(Envelope(
            kind: .rendering, correlationID: start.correlationID, sequence: start.sequence, epoch: start.epoch, nodePath: start.nodePath,
            payloads: [try codec.encode(CounterScreenMirror(onIncrement: "t1"))]).encodeFrames())
        let screen = try await rendering(of: bare.host, "the bare worker's rendering") { $0["c"]?.count == 0 }
        // The sender is inside a span of a tracer of its own: only the runtime's tracer reads it.
        let click = (traced ? tracer : W3CTestTracer()).startSpan("click")
        let sent = ServiceContext.$current.withValue(click.context) { screen["c"]!.onIncrement.send(1) }
        click.end()
        #expect(sent)
        let event = try await bare.receive(.event)
        let payload = try event.payloads[0].withUnsafeBytes { try codec.decode(TraceContextFields.self, from: $0, userInfo: [:]) }
        let sends = tracer.finishedSpans.filter { $0.operationName == SpanNames.sendEvent }
        switch (traced, version) {
        case (true, 5):
            let send = try #require(sends.first)
            #expect(payload.traceparents == ["00-\(send.traceID)-\(send.spanID)-01"])
        case (true, _):
            #expect(payload.traceparents == nil, "a protocol-4 worker gets the EVENT it always did")
            #expect(sends.count == 1, "the send is traced here all the same")
        default:
            #expect(payload.traceparents == nil, "no tracer, no trace context")
            #expect(sends.isEmpty)
        }
        await bare.finish()
    }

    /// The counter's rendering as the bare worker sends it (its sink as a token).
    struct CounterScreenMirror: Encodable {
        var label = "counter"
        var count = 0
        var step = 1
        var onIncrement: String
    }
}
