import Foundation
import Logging
import Tracing
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The parent role, inbound: the workers' messages (HELLO, renderings and flushes, errors),
/// routed to the proxies they answer, and the workers that join and leave.
extension ParentDriver {
    /// Handles what the workers' socket holds, one slice (`handleSlice`) per loop iteration, so
    /// a peer flooding it with messages that are slow to handle cannot starve the heartbeats
    /// that keep the other workers connected.
    func drainListener() {
        // A header and the most payload frames a valid message has; more make it invalid.
        let maxFrames = 1 + WireLimits.default.maxPayloadFrames
        handleSlice(of: { sockets.receiveFromListener(into: &receivedFrames, copyingAtMost: maxFrames) }) { peerID in
            metrics.bytesIn.increment(by: Int64(receivedFrames.byteCount(from: 1)))
            // Decoded in place into the reused envelope: only the payloads are copied out.
            let decoded = receivedFrames.withFrames(from: 1) { frames in
                Result { () throws(WireError) in try receivedEnvelope.decode(frames: frames, limits: .default) }
            }
            handleFromWorker(peerID, decoded: decoded.map { receivedEnvelope })
        }
    }

    /// Handles one message of a worker's `batch`.
    func handleFromWorker(_ peerID: WorkerID, frames: [[UInt8]]) {
        handleFromWorker(peerID, decoded: Result { () throws(WireError) in try Envelope(frames: frames, limits: .default) })
    }

    func handleFromWorker(_ peerID: WorkerID, decoded: Result<Envelope, WireError>) {
        let envelope: Envelope
        do {
            envelope = try decoded.get()
        } catch {
            if warnLimited("malformed message from a peer dropped", detail: "\(error)", metadata: ["peer": "\(peerID)"]) {
                replyError(to: peerID, code: .malformedMessage, message: "\(error)", correlationID: 0)
            }
            return
        }
        parent.heard(from: peerID, at: now)
        switch envelope.kind {
        case .batch:
            guard let messages = Outbox.split(envelope) else {
                if warnLimited("malformed message from a peer dropped", detail: "a batch's layout does not match its frames", metadata: ["peer": "\(peerID)"]) {
                    replyError(to: peerID, code: .malformedMessage, message: "malformed batch", correlationID: 0)
                }
                return
            }
            for message in messages { handleFromWorker(peerID, frames: message) }
        case .packedBatch:
            guard let batch = PackedBatch(envelope) else {
                if warnLimited("malformed message from a peer dropped", detail: "a packed batch's layout does not match its frames", metadata: ["peer": "\(peerID)"]) {
                    replyError(to: peerID, code: .malformedMessage, message: "malformed packed batch", correlationID: 0)
                }
                return
            }
            batch.forEachMessage { frames in
                let decoded = Result { () throws(WireError) in try batchedEnvelope.decode(frames: frames, limits: .default) }
                handleFromWorker(peerID, decoded: decoded.map { batchedEnvelope })
                return true
            }
        case .hello: handleHello(peerID, envelope)
        case .rendering, .outputs, .error, .heartbeat, .drain:
            // A peer talking as a worker without having joined (this parent restarted, or took
            // it for dead): tell it to join again rather than wait for it to notice the silence.
            guard let peer = workers[peerID] else {
                sendToWorker(peerID, kind: .reconnect, correlationID: 0, nodePath: "", payloads: [])
                return
            }
            switch envelope.kind {
            case .heartbeat: break
            case .drain: handleDrain(from: peer)
            default: routeToProxy(peer, envelope)
            }
        case .goodbye:
            removeWorker(peerID, reason: parent.workers[peerID]?.isDraining == true ? "left after draining (it said goodbye)" : "left (it said goodbye)")
        default:
            if warnLimited("unexpected message from a worker dropped", detail: "\(envelope.kind)", metadata: ["peer": "\(peerID)"]) {
                replyError(to: peerID, code: .malformedMessage, message: "unexpected \(envelope.kind)", correlationID: envelope.correlationID)
            }
        }
    }

    func handleHello(_ peerID: WorkerID, _ envelope: Envelope) {
        guard let payload = envelope.payloads.first,
            let hello = try? payload.withUnsafeBytes({ try codec.decode(HelloPayload.self, from: $0, userInfo: [:]) })
        else {
            if warnLimited("HELLO refused", detail: "its payload does not decode", metadata: ["peer": "\(peerID)"]) {
                replyError(to: peerID, code: .malformedMessage, message: "HELLO payload does not decode", correlationID: 0)
            }
            return
        }
        let version: Int
        switch ParentStateMachine.terms(
            ofHelloNaming: hello.name, pool: hello.pool, offering: hello.protocolVersions ?? [hello.protocolVersion],
            supported: configuration.protocolVersions)
        {
        case .agreed(let agreed):
            version = agreed
        case .nameTooLong(let reason):
            // The name is not logged: it is the very thing refused for its size.
            refuseHello(from: peerID, reason: reason, metadata: ["peer": "\(peerID)"])
            return
        case .noCommonVersion(let reason):
            refuseHello(from: peerID, reason: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"])
            return
        }
        var admission = parent.admit(name: hello.name, instance: hello.instance, from: peerID)
        if case .probe(let existing) = admission {
            // Another process under a live worker's name (a leftover, or a replacement started
            // during a partition). Is the old one still connected? A send to a peer that has
            // gone fails at once and removes it.
            sendToWorker(existing, kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            admission = parent.admit(name: hello.name, instance: hello.instance, from: peerID, probed: true)
        }
        switch admission {
        case .welcomeAgain:
            // HELLO again on a connection that has joined: a worker told to RECONNECT twice, or
            // a peer repeating itself. It is welcomed again and keeps its state (its children).
            logger.debug("repeated HELLO answered", metadata: ["worker": "\(hello.name)"])
            sendWelcome(to: peerID, protocolVersion: version)
            return
        case .refuseRenaming(let joinedAs):
            let reason = "this connection joined as \(joinedAs)"
            if warnLimited("HELLO refused", detail: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"]) {
                replyError(to: peerID, code: .refused, message: reason, correlationID: 0)
            }
            return
        case .refuseNameTaken, .probe:
            // Refused while the old one is alive; a refused worker asks again with back-off.
            let reason = "a live worker named \(hello.name) is already connected"
            if warnLimited("HELLO refused: name taken", detail: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"]) {
                replyError(to: peerID, code: .nameTaken, message: reason, correlationID: 0)
            }
            return
        case .join(let replacing):
            // The same worker on a fresh connection (it reconnected), or the old one is gone:
            // the new connection takes its place and its children are placed again.
            if let replacing { removeWorker(replacing, reason: "rejoined on a new connection") }
        }
        let hostedTypes = Set(hello.hostedTypes)
        let peer = WorkerPeer(
            id: peerID, name: hello.name, capacity: hello.capacity,
            processID: hello.processID, hostName: hello.hostName)
        peer.carriesTraceContext = version >= RemoteProtocol.traceContext
        peer.packing = version >= RemoteProtocol.packedBatches ? .packed : .framed
        workers[peerID] = peer
        parent.join(
            peerID,
            as: .init(
                name: hello.name, pool: hello.pool, instance: hello.instance, hostedTypes: hostedTypes, stateVersions: hello.stateVersions ?? [:],
                joinedAt: now))
        metrics.workersJoined.increment()
        logger.info(
            "worker joined",
            metadata: [
                "worker": "\(hello.name)", "pool": "\(hello.pool)", "types": .stringConvertible(hello.hostedTypes.count),
                "protocol": .stringConvertible(version),
            ])
        sendWelcome(to: peerID, protocolVersion: version)
        shared.setWorkers(workers.values.map(\.name))
        warn(of: placementCoverage.workerJoined(hello.name, announcing: hostedTypes))
        for proxy in proxies.walkAll() where hostedTypes.contains(proxy.typeName) {
            if parent.retryPlacement(of: proxy.childID) { proxy.placementRetried() }
        }
    }

    /// Answers a HELLO whose terms were refused (`ParentStateMachine.terms(ofHelloNaming:...)`)
    /// with ERROR `refused`, logged at a limited rate.
    private func refuseHello(from peerID: WorkerID, reason: String, metadata: Logger.Metadata) {
        if warnLimited("HELLO refused", detail: reason, metadata: metadata) {
            replyError(to: peerID, code: .refused, message: reason, correlationID: 0)
        }
    }

    func sendWelcome(to peerID: WorkerID, protocolVersion: Int) {
        let welcome = WelcomePayload(
            parentName: configuration.name, heartbeatIntervalMilliseconds: Int(configuration.heartbeatInterval.milliseconds), drains: true,
            protocolVersion: protocolVersion, startsCarryBase: true)
        guard let payload = try? codec.encode(welcome) else { return }
        sendToWorker(peerID, kind: .welcome, correlationID: 0, nodePath: "", payloads: [payload])
    }

    func routeToProxy(_ peer: WorkerPeer, _ envelope: Envelope) {
        let peerID = peer.id
        // Fencing (the machine's): only the child's current placement speaks for it. A message
        // from another worker, or from this worker about an earlier placement (an older epoch),
        // is stale.
        guard let proxy = proxies[envelope.correlationID], parent.accepts(from: peerID, about: envelope.correlationID, epoch: envelope.epoch) else {
            logger.debug(
                "\(envelope.kind) for an unknown or moved child dropped",
                metadata: ["path": "\(envelope.nodePath)", "epoch": .stringConvertible(envelope.epoch)])
            return
        }
        switch envelope.kind {
        case .rendering:
            guard let payload = envelope.payloads.first else { return }
            let flush = WorkerFlush(
                outputs: [], lengths: [], causes: [], ordinals: [], continues: false, rendering: payload,
                renderingSequence: envelope.sequence)
            receive(flush, for: proxy, from: peer)
        case .outputs:
            guard let first = envelope.payloads.first,
                let info = try? first.withUnsafeBytes({ try codec.decode(OutputsPayload.self, from: $0, userInfo: [:]) }),
                info.ordinals.count == info.causes.count, info.lengths.count == info.causes.count,
                envelope.payloads.count == 1 + (info.lengths.isEmpty ? 0 : 1) + (info.renderingSequence == nil ? 0 : 1),
                !(info.continues && info.renderingSequence != nil),
                PackedValues.lengths(info.lengths, match: info.lengths.isEmpty ? 0 : envelope.payloads[1].count)
            else {
                warnLimited("malformed outputs dropped", metadata: ["path": "\(proxy.path)"])
                return
            }
            guard outputsMessageInOrder(envelope, from: peerID) else { return }
            if envelope.acknowledged > 0 {
                parent.acknowledged(proxy.childID, through: envelope.acknowledged, at: now)
            }
            let flush = WorkerFlush(
                outputs: info.lengths.isEmpty ? [] : envelope.payloads[1], lengths: info.lengths, causes: info.causes,
                ordinals: info.ordinals, continues: info.continues, rendering: info.renderingSequence == nil ? nil : envelope.payloads.last,
                renderingSequence: info.renderingSequence ?? 0, acknowledged: envelope.acknowledged, snapshot: info.snapshot)
            if let tracer, let traceparent = traceContextFields(of: first)?.traceparent {
                // A flush after a traced event: applied inside a span continuing the worker's.
                let span = tracer.startSpan(SpanNames.applyFlush, context: TraceParent.extract(traceparent, with: tracer), ofKind: .consumer)
                span.attributes[SpanNames.pathAttribute] = proxy.path
                span.attributes[SpanNames.workerAttribute] = peer.name
                ServiceContext.$current.withValue(span.context) { receive(flush, for: proxy, from: peer) }
                shared.noteTracedFlush(span.context)
                span.end()
            } else {
                receive(flush, for: proxy, from: peer)
            }
            if info.released == true { completeRelease(of: proxy) }
        case .error:
            let error = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(ErrorPayload.self, from: $0, userInfo: [:]) }
            }
            let childError: RemoteChildError
            switch error?.code {
            case .unknownType: childError = .unknownType(error?.typeName ?? proxy.typeName)
            case .undecodableProps: childError = .undecodableProps(typeName: proxy.typeName, reason: error?.message ?? "")
            case .undecodableSnapshot: childError = .undecodableSnapshot(typeName: proxy.typeName, reason: error?.message ?? "")
            default: childError = .refused(error?.message ?? "unreadable error")
            }
            unplace(proxy.childID, from: peer)
            fail(proxy, childError)
            markChanged(proxy)
            answered(proxy)
        default:
            break
        }
    }

    /// The trace context fields of an EVENT's or OUTPUTS' first payload (only a runtime that
    /// traces reads them); `nil` if they do not decode.
    func traceContextFields(of payload: [UInt8]) -> TraceContextFields? {
        try? payload.withUnsafeBytes { try codec.decode(TraceContextFields.self, from: $0, userInfo: [:]) }
    }

    /// Whether an OUTPUTS message is the next one of its child's placement (its `sequence`
    /// numbers them from 1; 0, from a worker that does not number them, is not checked). A
    /// number skipped means the connection broke and lost messages in flight while libzmq
    /// reconnected by itself: outputs and acknowledgements of the lost ones would be taken as
    /// covered by this one. So the worker is treated as gone: its children move from their last
    /// acknowledged state with every later event replayed, and the worker, answered RECONNECT,
    /// joins again without them.
    func outputsMessageInOrder(_ envelope: Envelope, from peerID: WorkerID) -> Bool {
        switch parent.outputsMessage(childID: envelope.correlationID, epoch: envelope.epoch, number: envelope.sequence) {
        case .inOrder:
            return true
        case .lost(let missing):
            let lost = missing.count == 1 ? "message \(missing.lowerBound)" : "messages \(missing.lowerBound) to \(missing.upperBound)"
            removeWorker(peerID, reason: "lost messages in transit (OUTPUTS \(lost) for \(envelope.nodePath) never arrived)")
            return false
        }
    }

    /// Hands a worker's flush (one message's share) to its proxy with the machine's decision on
    /// which of its outputs are delivered (a replay's duplicates are not), and ends the settle's
    /// wait for it if it answers the child's current props.
    func receive(_ flush: WorkerFlush, for proxy: any AnyRemoteChildProxy, from peer: WorkerPeer) {
        if !flush.lengths.isEmpty { metrics.outputsReceived.increment(by: Int64(flush.lengths.count)) }
        if let rendering = flush.rendering { noteRendering(childID: proxy.childID, bytes: rendering.count) }
        let delivered = parent.outputsArrived(for: proxy.childID, causes: flush.causes, ordinals: flush.ordinals, continues: flush.continues)
        let changed = proxy.receive(flush: flush, workerName: peer.name, delivered: delivered)
        if changed { markChanged(proxy) }
        if !proxy.isAwaitingRendering(placed: parent.host(of: proxy.childID) != nil), answered(proxy) { noteRoundTrip(of: proxy) }
    }

    func removeWorker(_ peerID: WorkerID, reason: String) {
        guard let peer = workers.removeValue(forKey: peerID), let departure = parent.workerLeft(peerID) else { return }
        // Held messages for it are moot; its children's events wait for their next placement.
        peer.outbox.removeAll()
        logger.warning("worker left: \(peer.name) \(reason)", metadata: ["worker": "\(peer.name)"])
        metrics.workersLeft.increment()
        if !departure.worker.releasing.isEmpty {
            logger.warning(
                "\(peer.name) left before handing over \(departure.worker.releasing.count) children; they move from their last acknowledged state",
                metadata: ["worker": "\(peer.name)"])
        }
        for (id, after) in departure.children {
            guard let proxy = proxies[id] else { continue }
            switch after {
            case .moveOn:
                // Being moved (a drain, a rebalance) when its worker went, before the final flush
                // arrived, whichever of the two the loop saw first: it moves on as planned, from
                // its last acknowledged state with every later event replayed (as after a
                // failure), and is never shown unavailable.
                proxy.released()
            case .fail:
                fail(proxy, .workerUnavailable(worker: peer.name, reason: reason))
                rebalancing.remove(id)
            }
            markChanged(proxy)
            answered(proxy)
        }
        shared.setWorkers(workers.values.map(\.name))
    }

    func replyError(to peerID: WorkerID, code: ErrorPayload.Code, message: String, correlationID: UInt64) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message)) else { return }
        sendToWorker(peerID, kind: .error, correlationID: correlationID, nodePath: "", payloads: [payload])
    }
}
