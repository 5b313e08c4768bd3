import Foundation
import Logging
import Tracing
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The worker role's driver, confined to the loop thread: it feeds the parent's messages, the
/// connection's events and the hosted children's renderings and outputs to the worker's state
/// machine (`WorkerStateMachine`) and performs what it decides: decoding and encoding, the hosted
/// children's calls, the sends. Its lease is kept in `Liveness/WorkerDriver+Lease.swift`, its
/// drain in `Liveness/WorkerDriver+Drain.swift`, its events in `WorkerDriver+Events.swift`.
///
/// A worker that is also a parent (a middle process) composes the two roles: its hosted
/// children's own remote children are this process's parent role's (`parentRole`), which also
/// takes the events passed on to them.
final class WorkerDriver: LoopRoleDriver {
    /// What the loop gives both drivers (its configuration, codec, sockets, queue, metrics).
    let resources: LoopResources

    /// This process's parent role: a hosted child's remote children are placed there, and events
    /// for sinks this process passed on go there (`eventRoute(for:in:)`).
    let parentRole: ParentDriver
    /// The runtime whose loop this is (its hosted children's hosts run on it); set by
    /// `RemoteRuntime` right after creating the loop.
    weak var runtime: RemoteRuntime?

    /// The worker role's protocol state and decisions (`WorkerStateMachine`).
    var worker: WorkerStateMachine<any AnyHostedChild>
    /// After how many events a slice of the parent's messages ends and the loop flushes their
    /// outputs (`drainUpstream`): enough to spread a flush's fixed costs (a render, a snapshot, a
    /// message) thin, few enough that the parent works on one flush while this worker makes the
    /// next.
    static let eventsPerSlice = 256
    /// Where every message to the parent is assembled: sent at once, or, while `flushHosted`
    /// runs, held and sent batched at its end. Its storage is reused from one send to the next.
    var upstreamOutbox = Outbox()
    /// Set while `flushHosted` runs: `sendUpstream` then appends to `upstreamOutbox`.
    var holdingUpstream = false
    /// The lists `flushHosted` walks, their storage reused from one flush to the next.
    var childrenToRender: [UInt64] = []
    var childrenToFlush: [UInt64] = []
    /// Who waits for the outcome of the drain in progress (each `RemoteRuntime.drain` call).
    var drainCompletions: [(DrainOutcome) -> Void] = []
    /// Set while a hosted child's render pass settles on this thread (`RemoteEngine.settle()`):
    /// the child rendering is inside its host's lock, so a fence decided meanwhile (the
    /// connection to the parent closed, the parent silent too long) is held in `heldFences`
    /// and carried out once the pass is over, before anything more from the parent is read or
    /// any queued job runs (`performHeldFences`).
    var holdsFences = false
    var heldFences: [WorkerStateMachine<any AnyHostedChild>.Fence] = []
    /// The message read last from the parent's socket, in storage reused for the next one.
    var receivedFrames = ZMQFrameBuffer()
    /// That message decoded, its payload array and node path reused for the next one.
    var receivedEnvelope = Envelope(kind: .heartbeat)
    /// A message of a received `packedBatch`, decoded in place in the same way.
    var batchedEnvelope = Envelope(kind: .heartbeat)
    /// How messages to the parent are batched: packed once the parent's WELCOME chose protocol
    /// 6 or later (`RemoteProtocol.packedBatches`), framed before and with an older parent.
    var parentPacking = Outbox.Packing.framed
    var peerWarnings = LogRateLimiter()
    /// Whether the runtime is stopping (no lease, no heartbeats, no rebalancing any more).
    var isShuttingDown: Bool { worker.leaving.isShuttingDown }
    /// This runtime's identity in HELLO: the same across its reconnections, unique per process.
    let instance = UUID().uuidString
    /// Whether the protocol version the parent chose carries trace context: OUTPUTS says its
    /// flush's `traceparent` only then.
    var parentCarriesTraceContext = false
    /// For each child that applied a traced event since its last flush, the context of the last
    /// one's apply span: its render and flush continue that trace (empty unless tracing).
    var flushTraceContexts: [UInt64: ServiceContext] = [:]
    /// The runtime's tracer (`RemoteRuntimeConfiguration.tracer`), kept at hand: `nil` is
    /// tracing off, checked before any tracing work.
    let tracer: (any Tracer)?

    init(resources: LoopResources, parentRole: ParentDriver) {
        self.resources = resources
        self.parentRole = parentRole
        tracer = resources.configuration.tracer
        let configuration = resources.configuration
        worker = WorkerStateMachine(
            configuration: .init(
                heartbeatInterval: configuration.heartbeatInterval, heartbeatLiveness: configuration.heartbeatLiveness,
                capacity: configuration.capacity, hasParent: resources.sockets.hasUpstream,
                parentEndpoints: resources.sockets.parentEndpointCount, checks: configuration.protocolChecks),
            now: resources.clock.now)
    }

    /// Stops hosting for good (the runtime is shutting down): the children stop, what they
    /// produced leaves, and the parent is told GOODBYE.
    func shutDown() {
        let stopped = worker.shutDown()
        if let outcome = stopped.drain { reportDrain(outcome) }
        for hosted in stopped.children {
            hosted.child.stop()
            logStoppedHosting(hosted, because: "this worker is shutting down")
        }
        flushHosted()
        if sockets.hasUpstream { sendUpstream(kind: .goodbye, correlationID: 0, nodePath: "", payloads: []) }
    }
}

extension WorkerDriver {
    func sendHello() {
        let hello = HelloPayload(
            name: configuration.name, pool: configuration.pool, hostedTypes: configuration.registry.typeNames,
            capacity: configuration.capacity, protocolVersion: configuration.protocolVersions.upperBound,
            protocolVersions: Array(configuration.protocolVersions), instance: instance,
            processID: getpid(), hostName: ProcessInfo.processInfo.hostName, stateVersions: configuration.registry.stateVersions)
        guard let payload = try? codec.encode(hello) else { return }
        sendUpstream(kind: .hello, correlationID: 0, nodePath: "", payloads: [payload])
    }

    /// Handles what the parent sent, one slice (`handleSlice`) per loop iteration, so a burst of
    /// events (each applied and rendered here) never keeps the loop from flushing outputs and
    /// sending heartbeats for so long that the parent takes this worker for dead.
    ///
    /// A slice also ends once it applied `eventsPerSlice` events: the loop then flushes their
    /// outputs, so the parent applies them while this worker applies the next ones. A slice as
    /// long as the queue made the two processes take turns (the parent idle while this worker
    /// applied thousands of events, this worker idle while the parent applied their outputs).
    /// The state machine ends it after half a heartbeat interval however few events it applied
    /// (`sliceContinues`), so the simulator checks that bound too.
    func drainUpstream() {
        worker.beginSlice(at: now)
        handleSlice(of: { () -> Void? in
            guard !fenceIfCutOffFromParent(), worker.sliceContinues(limit: Self.eventsPerSlice, at: now),
                sockets.receiveFromUpstream(into: &receivedFrames)
            else {
                return nil
            }
            return ()
        }) {
            // A message proves the connection even if its handshake event is still unread.
            worker.heardFromParent(at: now)
            shared.countMessageFromParent()
            metrics.bytesIn.increment(by: Int64(receivedFrames.byteCount()))
            // Decoded in place into the reused envelope: only the payloads are copied out.
            let decoded = receivedFrames.withFrames { frames in
                Result { () throws(WireError) in try receivedEnvelope.decode(frames: frames, limits: .default) }
            }
            handleFromParent(decoded.map { receivedEnvelope })
        }
    }

    /// Handles one message of the parent's `batch`.
    func handleFromParent(_ frames: [[UInt8]]) {
        handleFromParent(Result { () throws(WireError) in try Envelope(frames: frames, limits: .default) })
    }

    func handleFromParent(_ decoded: Result<Envelope, WireError>) {
        let envelope: Envelope
        do {
            envelope = try decoded.get()
        } catch {
            warnLimited("malformed message from the parent dropped", detail: "\(error)")
            return
        }
        let childID = envelope.correlationID
        switch envelope.kind {
        case .batch:
            guard let messages = Outbox.split(envelope) else {
                logger.warning("malformed message from the parent dropped: a batch's layout does not match its frames")
                return
            }
            for message in messages {
                // A batch holds many messages: the lease is checked before each, as before each
                // message read from the socket.
                guard !fenceIfCutOffFromParent() else { return }
                handleFromParent(message)
            }
        case .packedBatch:
            guard let batch = PackedBatch(envelope) else {
                warnLimited("malformed message from the parent dropped", detail: "a packed batch's layout does not match its frames")
                return
            }
            // Every message in the one slice this message is read in: a pass's updates are
            // applied and rendered here, and their renderings leave in one flush.
            batch.forEachMessage { frames in
                guard !fenceIfCutOffFromParent() else { return false }
                let decoded = Result { () throws(WireError) in try batchedEnvelope.decode(frames: frames, limits: .default) }
                handleFromParent(decoded.map { batchedEnvelope })
                return true
            }
        case .welcome:
            let welcome = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(WelcomePayload.self, from: $0, userInfo: [:]) }
            }
            worker.welcomed(drains: welcome?.drains == true, startsCarryBase: welcome?.startsCarryBase == true)
            shared.setWelcomed(true)
            parentCarriesTraceContext = (welcome?.protocolVersion ?? 4) >= RemoteProtocol.traceContext
            parentPacking = (welcome?.protocolVersion ?? 4) >= RemoteProtocol.packedBatches ? .packed : .framed
            logger.info("welcomed by the parent", metadata: ["protocol": .stringConvertible(welcome?.protocolVersion ?? 4)])
        case .start:
            handleStart(envelope)
        case .update:
            guard let child = worker.child(childID, epoch: envelope.epoch), let props = envelope.payloads.first else {
                replyUpstreamError(.unknownChild, "UPDATE for an unknown child", envelope)
                return
            }
            do {
                try props.withUnsafeBytes { try child.update(props: $0, propsSequence: envelope.sequence) }
                // Render for the new props now rather than in a later loop job: the rendering
                // then leaves with this iteration's flush, a thread wake-up sooner.
                child.render()
                // An update is work of an event's size: counted in the slice, so a burst of a
                // thousand updates is flushed in parts while the parent still sends the rest
                // (and decodes each part while this worker renders the next).
                worker.propsUpdated()
                shared.count { $0.updated += 1 }
            } catch {
                shared.count { $0.errors += 1 }
                replyUpstreamError(.undecodableProps, "\(error)", envelope)
            }
        case .stop:
            // A STOP for an earlier placement must not stop the current one.
            if let stopped = worker.stopRequested(childID, epoch: envelope.epoch) {
                stopHosting(stopped, because: "the parent stopped it")
                shared.count { $0.stopped += 1 }
            }
        case .event:
            handleEvents(envelope)
        case .error:
            let error = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(ErrorPayload.self, from: $0, userInfo: [:]) }
            }
            let said: JoinRefusal? =
                switch error?.code {
                case .nameTaken: .nameTaken(name: configuration.name)
                case .refused: .refused(error?.message ?? "")
                default: nil
                }
            guard let refusal = worker.joinRefusal(correlationID: envelope.correlationID, refusal: said) else {
                warnLimited("the parent reported an error", metadata: ["path": "\(envelope.nodePath)", "error": "\(error?.message ?? "?")"])
                break
            }
            // The answer to this worker's HELLO. It keeps asking with back-off (the silence rule);
            // a daemon may rather exit (`RemoteRuntime.refusal()`).
            logger.error("the parent refused this worker: \(refusal)")
            shared.refuse(refusal)
        case .reconnect:
            // Not welcomed yet: the HELLO already sent is still to be answered (or was refused,
            // and the silence rule retries with back-off); a HELLO per RECONNECT would only
            // echo every heartbeat.
            // The parent does not know this connection (it restarted, or declared this worker
            // dead): join again, without the children it no longer counts on here.
            let count = worker.hosting.children.count
            guard let forgotten = worker.reconnectRequested() else { break }
            logger.notice("the parent does not know this worker; joining again", metadata: ["children": .stringConvertible(count)])
            stopForgotten(forgotten)
            sendHello()
        case .release:
            handleRelease(envelope)
        case .drain:
            handleDrainAnswer()
        case .heartbeat:
            break
        default:
            warnLimited("unexpected message from the parent dropped", detail: "\(envelope.kind)")
        }
    }

    func handleStart(_ envelope: Envelope) {
        let childID = envelope.correlationID
        guard envelope.payloads.count == 2,
            // With the loop's coder storage, as the props are, not a decoder made per START.
            let start = try? envelope.payloads[0].withUnsafeBytes({ try codec.decode(StartPayload.self, from: $0, reusing: codingScratch) })
        else {
            replyUpstreamError(.malformedMessage, "START needs a start payload and props", envelope)
            return
        }
        guard let factory = configuration.registry.factory(for: start.typeName) else {
            shared.count { $0.errors += 1 }
            warnLimited("START for an unknown workflow type", metadata: ["path": "\(envelope.nodePath)", "type": "\(start.typeName)"], level: .error)
            replyUpstreamError(.unknownType, "unknown workflow type \(start.typeName)", envelope, typeName: start.typeName)
            return
        }
        guard worker.startRequested() == .place else {
            replyUpstreamError(.refused, "worker \(configuration.name) is at capacity (\(configuration.capacity))", envelope)
            return
        }
        // A new placement of a child this worker already hosts: the old copy ends here, with
        // everything it had queued for the parent (stale under the new epoch).
        if let earlier = worker.discard(childID) { stopHosting(earlier, because: "placed here again, epoch \(envelope.epoch)") }
        do {
            let child = try envelope.payloads[1].withUnsafeBytes { bytes in
                try factory.start(
                    childID: childID, path: envelope.nodePath, props: bytes, propsSequence: envelope.sequence, snapshot: start.snapshot,
                    environment: hostedChildEnvironment(childID: childID, path: envelope.nodePath))
            }
            worker.started(childID, epoch: envelope.epoch, path: envelope.nodePath, child: child, appliedThrough: envelope.acknowledged)
            shared.count { $0.started += 1 }
            // One line per placement, with its fencing token: an operator can check from the workers'
            // logs alone that no two of them hosted a child in the same epoch.
            logger.info(
                "hosting \(envelope.nodePath), epoch \(envelope.epoch)",
                metadata: ["path": "\(envelope.nodePath)", "type": "\(start.typeName)", "epoch": .stringConvertible(envelope.epoch)])
        } catch RemoteChildError.undecodableSnapshot(_, let reason) {
            shared.count { $0.errors += 1 }
            logger.error("START refused: the snapshot cannot be read here: \(reason)", metadata: ["path": "\(envelope.nodePath)"])
            replyUpstreamError(.undecodableSnapshot, reason, envelope, typeName: start.typeName)
        } catch {
            shared.count { $0.errors += 1 }
            logger.error("START failed: \(error)", metadata: ["path": "\(envelope.nodePath)"])
            replyUpstreamError(.undecodableProps, "\(error)", envelope, typeName: start.typeName)
        }
    }

    /// Stops a copy the machine no longer hosts.
    func stopHosting(_ hosted: WorkerStateMachine<any AnyHostedChild>.Hosted, because reason: String) {
        hosted.child.stop()
        logStoppedHosting(hosted, because: reason)
    }

    /// The end of a placement here, with its epoch (the counterpart of "hosting").
    func logStoppedHosting(_ hosted: WorkerStateMachine<any AnyHostedChild>.Hosted, because reason: String) {
        logger.info(
            "stopped hosting \(hosted.path), epoch \(hosted.epoch): \(reason)",
            metadata: ["path": "\(hosted.path)", "epoch": .stringConvertible(hosted.epoch)])
    }

    func replyUpstreamError(_ code: ErrorPayload.Code, _ message: String, _ envelope: Envelope, typeName: String? = nil) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message, typeName: typeName)) else { return }
        sendUpstream(kind: .error, correlationID: envelope.correlationID, epoch: envelope.epoch, nodePath: envelope.nodePath, payloads: [payload])
    }

    /// What a new hosted child is given: the codec, its sink table, and a forwarder for its
    /// renderings and outputs: queued here, flushed once per loop iteration (outputs first, then
    /// the latest rendering), so a burst costs one message.
    func hostedChildEnvironment(childID: UInt64, path: String) -> HostedChildEnvironment {
        let exporter = SinkTable()
        return HostedChildEnvironment(
            codec: codec, codingScratch: codingScratch, exporter: exporter,
            forwarder: HostedChildForwarder(childID: childID, path: path, exporter: exporter, bound: LoopBound(self, owner: jobs), codec: codec),
            loop: runtime.map { HostedChildLoop(runtime: $0, scope: path) }, observers: configuration.hostedChildObservers)
    }

    func enqueue(rendering bytes: [UInt8], sequence: UInt64, childID: UInt64, path: String) {
        worker.renderingProduced(bytes, sequence: sequence, childID: childID, path: path)
    }

    func enqueue(output bytes: [UInt8], childID: UInt64, path: String) {
        worker.outputProduced(bytes, childID: childID, path: path)
    }

    func flushHosted() {
        renderTouchedChildren()
        worker.takeFlushOrder(into: &childrenToFlush)
        guard !childrenToFlush.isEmpty else { return }
        holdingUpstream = true
        for childID in childrenToFlush { flush(childID) }
        holdingUpstream = false
        // One send per batch of children, not one per child.
        sendUpstreamOutbox(nodePath: "")
    }

    /// Sends what a child produced since the last flush as one step for its parent: its outputs
    /// in emission order, the rendering after exactly those outputs, and the cumulative
    /// acknowledgement of the events applied so far with a snapshot taken right after them, all
    /// in one multipart message (split over consecutive messages, marked `continues`, only when
    /// there are more outputs than one message carries). The parent never sees an
    /// acknowledgement or an output without the matching state, nor a rendering without the
    /// outputs before it.
    ///
    /// `releasing` (the answer to RELEASE): the last message always carries the acknowledgement
    /// and a snapshot, and says `released`: the parent places the child again from it.
    func flush(_ childID: UInt64, releasing: Bool = false) {
        guard let flush = worker.flush(childID, releasing: releasing), let child = worker.hosting.children[childID]?.child else { return }
        guard !flush.isRenderingOnly else {
            // A rendering alone is one step by itself.
            if let rendering = flush.rendering {
                sendUpstream(
                    kind: .rendering, correlationID: childID, sequence: rendering.sequence, epoch: flush.epoch, nodePath: rendering.path,
                    payloads: CollectionOfOne(rendering.bytes))
            }
            return
        }
        // A flush after a traced event: a span of its own, whose context the parent continues.
        var flushSpan: (any Span)?
        if !flushTraceContexts.isEmpty, let tracer, let context = flushTraceContexts.removeValue(forKey: childID) {
            let span = tracer.startSpan(SpanNames.flush, context: context, ofKind: .producer)
            span.attributes[SpanNames.pathAttribute] = flush.path
            span.attributes[SpanNames.workerAttribute] = configuration.name
            flushSpan = span
        }
        defer { flushSpan?.end() }
        let flushTraceparent = parentCarriesTraceContext ? flushSpan.flatMap { span in tracer.flatMap { TraceParent.inject(span.context, with: $0) } } : nil
        let outputs = flush.outputs
        let values = outputs?.values ?? PackedValues()
        let lengths = values.lengths
        var start = 0
        var byteStart = 0
        while true {
            // As many outputs as one message carries; the last message holds the remaining
            // outputs and the rendering after them.
            let end = start + PackedValues.prefixFitting(
                lengths[start...].lazy.map { Int($0) }, maxCount: configuration.maxOutputsPerMessage)
            let isLast = end == lengths.count
            let byteEnd = lengths[start..<end].reduce(byteStart) { $0 + Int($1) }
            // With the acknowledgement, and with any outputs: the parent applies them together
            // with this state, so a parent restored from it after a failover neither loses nor
            // repeats outputs no event of its caused (a worker's, or a grandchild's passed on).
            let snapshot = isLast ? child.snapshot() : nil
            let info = OutputsPayload(
                causes: Array(outputs?.causes[start..<end] ?? []), ordinals: Array(outputs?.ordinals[start..<end] ?? []),
                lengths: Array(lengths[start..<end]), snapshot: snapshot, continues: !isLast,
                renderingSequence: isLast ? flush.rendering?.sequence : nil, released: isLast && flush.released ? true : nil,
                traceparent: isLast ? flushTraceparent : nil)
            guard let header = try? codec.encode(info) else {
                logger.error("an outputs header does not encode", metadata: ["path": "\(flush.path)"])
                return
            }
            var payloads = [header]
            if end > start {
                // The whole flush in one message (the usual case) needs no copy of its outputs.
                payloads.append(start == 0 && isLast ? values.bytes : Array(values.bytes[byteStart..<byteEnd]))
            }
            if isLast, let rendering = flush.rendering { payloads.append(rendering.bytes) }
            sendUpstream(
                kind: .outputs, correlationID: childID, sequence: worker.numberOutputsMessage(for: childID),
                acknowledged: isLast ? flush.acknowledged ?? 0 : 0, epoch: flush.epoch, nodePath: flush.path, payloads: payloads)
            if isLast { break }
            start = end
            byteStart = byteEnd
        }
    }

    func sendUpstream(
        kind: MessageKind, correlationID: UInt64, sequence: UInt64 = 0, acknowledged: UInt64 = 0, epoch: UInt64 = 0, nodePath: String,
        payloads: some Collection<[UInt8]>
    ) {
        let header = EnvelopeHeader(
            kind: kind, codec: codec.id, correlationID: correlationID, sequence: sequence, acknowledged: acknowledged, epoch: epoch,
            nodePath: nodePath)
        do {
            try upstreamOutbox.append(header, payloads: payloads)
        } catch {
            logger.warning("cannot send \(kind) to the parent: \(error)", metadata: ["path": "\(nodePath)"])
            return
        }
        if !holdingUpstream { sendUpstreamOutbox(nodePath: nodePath) }
    }

    /// Sends what `upstreamOutbox` holds, batched, keeping its storage for the next messages.
    private func sendUpstreamOutbox(nodePath: String) {
        var outbox = Outbox()
        swap(&outbox, &upstreamOutbox)
        outbox.send(codec: codec, packing: parentPacking) { message in
            transmitUpstream(message, nodePath: nodePath)
            return true
        }
        if upstreamOutbox.isEmpty { swap(&outbox, &upstreamOutbox) }
    }

    private func transmitUpstream(_ message: OutgoingMessage, nodePath: String) {
        let kind = message.kind
        // Counted before the send, so a parent that has it already finds it counted (and taken
        // back if the send fails).
        shared.countMessagesToParent(1)
        do {
            metrics.bytesOut.increment(by: Int64(message.byteCount))
            try sockets.sendUpstream(message)
            worker.sentToParent(at: now)
        } catch {
            shared.countMessagesToParent(-1)
            if worker.sendFailed(hello: kind == .hello) == .notConnectedYet {
                // No connection yet, or its handshake failed (which the monitor reports in words):
                // nothing takes the message. A HELLO goes out again once a handshake succeeds.
                logger.debug("\(kind) not sent: no connection to the parent yet", metadata: ["path": "\(nodePath)"])
                return
            }
            // Typically EAGAIN: the connection is gone or its queue is full. Rate limited:
            // heartbeats would repeat it every interval.
            let reason = error.isAgain ? "no connection to the parent takes it (not connected, or its queue is full)" : "\(error)"
            warnLimited("cannot send to the parent", detail: "\(kind) dropped: \(reason)", metadata: ["path": "\(nodePath)"])
        }
    }
}

/// Where the worker driver sends an event for a hosted child (`eventRoute(for:in:)`).
enum HostedEventRoute {
    /// To a sink of one of the child's renderings (or, for a token of another incarnation, the
    /// sink in the same slot of its latest): decoded and sent there.
    case sink(SinkTable.ResolvedToken)
    /// To a remote child of the hosted child, for a sink this process passed on in a rendering
    /// the hosted child's table does not hold (it restarted since): passed on as it is.
    case forward(childID: UInt64, token: String)
}
