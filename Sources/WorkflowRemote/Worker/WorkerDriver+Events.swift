import Foundation
import Logging
import Tracing
import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// The worker role's events: a batch of EVENTs for one hosted child applied one by one (each
/// action's outputs tagged with its event's sequence), passed on to the child's own remote
/// children where its sink routes them, and each touched child rendered once per slice.
extension WorkerDriver {
    /// Applies a batch of events for one child, each on its own: the outputs an event's action
    /// emits are tagged with that event's sequence, and the acknowledgement covers it. The child
    /// renders once for the whole slice (`renderTouchedChildren`), not once per event: only the
    /// rendering after the last event of a flush would be sent anyway.
    func handleEvents(_ envelope: Envelope) {
        let childID = envelope.correlationID
        let info = envelope.payloads.first.flatMap { first in
            try? first.withUnsafeBytes { try codec.decode(EventsPayload.self, from: $0, userInfo: [:]) }
        }
        var run: WorkerStateMachine<any AnyHostedChild>.EventRun
        switch worker.eventsArrived(for: childID, epoch: envelope.epoch, firstSequence: envelope.sequence, count: info?.lengths.count ?? 0, at: now) {
        case .apply(let events):
            run = events
        case .unknownChild:
            shared.count { $0.droppedEvents += max(1, info?.lengths.count ?? 1) }
            logger.debug("events for an unknown child dropped", metadata: ["path": "\(envelope.nodePath)"])
            return
        case .inputLost(let expected, let received, let fence):
            shared.count { $0.droppedEvents += max(1, info?.lengths.count ?? 1) }
            logger.warning(
                "events from the parent were lost in transit (expected event \(expected), received \(received)); stopping hosted children so the parent places them again from their last acknowledged state",
                metadata: ["path": "\(envelope.nodePath)"])
            perform(fence)
            return
        }
        // The header, and the events packed in one frame: all of it matches, or none of it is
        // applied.
        guard envelope.sequence > 0, envelope.payloads.count == 2, let info,
            info.tokenIndexes.count == info.lengths.count, info.tokenIndexes.allSatisfy({ Int($0) < info.tokens.count }),
            PackedValues.lengths(info.lengths, match: envelope.payloads[1].count)
        else {
            shared.count { $0.droppedEvents += max(1, info?.lengths.count ?? 1) }
            warnLimited("malformed events from the parent dropped", detail: "the EVENT header does not match its events frame",
                metadata: ["path": "\(envelope.nodePath)"])
            return
        }
        let child = run.child
        // Resolved once per batch: the sink table changes only when the child renders.
        let routes = info.tokens.map { eventRoute(for: $0, in: child) }
        var leaseRanOut = false
        let tokenIndexes = info.tokenIndexes
        // The parent's send spans, one per event, when this runtime traces (a list of another
        // length is ignored: the events are applied untraced).
        let traceparents = tracer == nil ? nil : parentRole.traceContextFields(of: envelope.payloads[0])?.traceparents.flatMap {
            $0.count == info.lengths.count ? $0 : nil
        }
        // Each event is applied right after it is delivered: the host need not schedule a drain.
        child.holdingDrains {
            PackedValues.forEach(in: envelope.payloads[1], lengths: info.lengths) { index, event in
                // The machine checks the lease before each event: this thread may have been
                // stopped between two.
                switch worker.nextEvent(of: &run, at: now) {
                case .apply: break
                case .done: return false
                case .leaseRanOut:
                    leaseRanOut = true
                    return false
                }
                // Applied now, so the outputs it causes are tagged with its sequence and the next
                // flush can acknowledge it together with a snapshot that includes it.
                var delivered = false
                if let traceparents, !traceparents[index].isEmpty, let tracer {
                    delivered = applyTraced(
                        event: event, via: routes[Int(tokenIndexes[index])], to: child, childID: childID,
                        sequence: envelope.sequence + UInt64(index), path: envelope.nodePath, traceparent: traceparents[index], tracer: tracer)
                } else if let route = routes[Int(tokenIndexes[index])], deliver(event: event, via: route, to: child) {
                    child.apply()
                    delivered = true
                }
                worker.eventApplied(in: &run, delivered: delivered)
                return true
            }
        }
        worker.endEvents(run)
        if leaseRanOut {
            // The child may run elsewhere already: stop hosting, apply and send nothing more.
            fenceIfCutOffFromParent()
            return
        }
        shared.count {
            $0.events += run.delivered
            $0.droppedEvents += tokenIndexes.count - run.delivered
        }
        if run.delivered > 0 { metrics.eventsApplied.increment(by: Int64(run.delivered)) }
    }

    /// Where events for `token` go in `child`: a sink of its renderings, or, for a sink this
    /// process passed on that the child's table does not hold (it restarted here, or was placed
    /// here after a failover, and has not rendered that sink again yet), the remote child of its
    /// own the token names (`forwardingRoute(for:)`).
    func eventRoute(for token: String, in child: any AnyHostedChild) -> HostedEventRoute? {
        if let route = child.route(for: token) { return .sink(route) }
        return parentRole.forwardingRoute(for: token).map { .forward(childID: $0.childID, token: $0.token) }
    }

    /// Hands one event to where `route` leads; `false` if its sink or remote child is gone.
    /// `context`: the event's trace context, passed on with an event forwarded to a remote child.
    func deliver(
        event bytes: UnsafeRawBufferPointer, via route: HostedEventRoute, to child: any AnyHostedChild, context: ServiceContext? = nil
    ) -> Bool {
        switch route {
        case .sink(let route): child.deliver(event: bytes, via: route)
        case .forward(let childID, let token): parentRole.forward(event: Array(bytes), token: token, toChild: childID, context: context)
        }
    }

    /// `deliver` and apply of an event the parent traced, inside an apply span that continues
    /// the parent's send span. The span's context is the current one while the action runs, so
    /// an event the action sends on to a remote child of this process's own (a nested worker)
    /// carries it further; the child's render and flush continue it too (`flushTraceContexts`).
    private func applyTraced(
        event: UnsafeRawBufferPointer, via route: HostedEventRoute?, to child: any AnyHostedChild, childID: UInt64, sequence: UInt64,
        path: String, traceparent: String, tracer: any Tracer
    ) -> Bool {
        let span = tracer.startSpan(SpanNames.applyEvent, context: TraceParent.extract(traceparent, with: tracer), ofKind: .consumer)
        span.attributes[SpanNames.pathAttribute] = path
        span.attributes[SpanNames.workerAttribute] = configuration.name
        span.attributes[SpanNames.sequenceAttribute] = Int64(sequence)
        defer { span.end() }
        let context = span.context
        let delivered = ServiceContext.$current.withValue(context) { () -> Bool in
            guard let route, deliver(event: event, via: route, to: child, context: context) else { return false }
            child.apply()
            return true
        }
        if flushTraceContexts.count >= EventTraceContexts.limit { flushTraceContexts.removeAll() }
        flushTraceContexts[childID] = context
        return delivered
    }

    /// Renders each child that applied events since it last rendered (once per slice), a child
    /// that applied a traced event inside a render span of that trace.
    func renderTouchedChildren() {
        worker.takeChildrenToRender(into: &childrenToRender)
        for childID in childrenToRender {
            guard let child = worker.hosting.children[childID]?.child else { continue }
            if !flushTraceContexts.isEmpty, let tracer, let context = flushTraceContexts[childID] {
                let span = tracer.startSpan(SpanNames.render, context: context)
                span.attributes[SpanNames.workerAttribute] = configuration.name
                ServiceContext.$current.withValue(span.context) { child.render() }
                span.end()
            } else {
                child.render()
            }
        }
    }
}
