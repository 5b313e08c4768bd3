import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The worker role: hosting children for a parent and forwarding their renderings and outputs.
extension RemoteEngine {
    // MARK: Worker role

    func sendHello() {
        let hello = HelloPayload(
            name: configuration.name, pool: configuration.pool, hostedTypes: configuration.registry.typeNames,
            capacity: configuration.capacity, protocolVersion: configuration.protocolVersions.upperBound,
            protocolVersions: Array(configuration.protocolVersions), instance: instance,
            processID: getpid(), hostName: ProcessInfo.processInfo.hostName)
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
    func drainUpstream() {
        eventsInSlice = 0
        handleSlice(of: { () -> Void? in
            guard !fenceIfCutOffFromParent(), eventsInSlice < Self.eventsPerSlice, sockets.receiveFromUpstream(into: &receivedFrames) else {
                return nil
            }
            return ()
        }) {
            lastHeardUpstream = .now
            // A message proves the connection even if its handshake event is still unread.
            if upstreamConnectedAt == nil { upstreamConnectedAt = lastHeardUpstream }
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
        case .welcome:
            reconnectAttempts = 0
            let welcome = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(WelcomePayload.self, from: $0, userInfo: [:]) }
            }
            parentDrains = welcome?.drains == true
            shared.setWelcomed(true)
            logger.info("welcomed by the parent", metadata: ["protocol": .stringConvertible(welcome?.protocolVersion ?? 4)])
        case .start:
            handleStart(envelope)
        case .update:
            guard let child = hosted[childID], child.epoch == envelope.epoch, let props = envelope.payloads.first else {
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
                eventsInSlice += 1
                shared.count { $0.updated += 1 }
            } catch {
                shared.count { $0.errors += 1 }
                replyUpstreamError(.undecodableProps, "\(error)", envelope)
            }
        case .stop:
            // A STOP for an earlier placement must not stop the current one.
            if let child = hosted[childID], child.epoch == envelope.epoch {
                discardHosted(childID, because: "the parent stopped it")
                shared.count { $0.stopped += 1 }
            }
        case .event:
            handleEvents(envelope)
        case .error:
            let error = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(ErrorPayload.self, from: $0, userInfo: [:]) }
            }
            guard envelope.correlationID == 0, !shared.isWelcomed, let error, error.code == .nameTaken || error.code == .refused else {
                warnLimited("the parent reported an error", metadata: ["path": "\(envelope.nodePath)", "error": "\(error?.message ?? "?")"])
                break
            }
            // The answer to this worker's HELLO. It keeps asking with back-off (the silence rule);
            // a daemon may rather exit (`RemoteRuntime.refusal()`).
            let refusal: JoinRefusal = error.code == .nameTaken ? .nameTaken(name: configuration.name) : .refused(error.message)
            logger.error("the parent refused this worker: \(refusal)")
            shared.refuse(refusal)
        case .reconnect:
            // Not welcomed yet: the HELLO already sent is still to be answered (or was refused,
            // and the silence rule retries with back-off); a HELLO per RECONNECT would only
            // echo every heartbeat.
            guard shared.isWelcomed else { break }
            // The parent does not know this connection (it restarted, or declared this worker
            // dead): join again, without the children it no longer counts on here.
            logger.notice("the parent does not know this worker; joining again", metadata: ["children": .stringConvertible(hosted.count)])
            forgetHostedChildren()
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

    /// Applies a batch of events for one child, each on its own: the outputs an event's action
    /// emits are tagged with that event's sequence, and the acknowledgement covers it. The child
    /// renders once for the whole slice (`renderTouchedChildren`), not once per event: only the
    /// rendering after the last event of a flush would be sent anyway.
    func handleEvents(_ envelope: Envelope) {
        let childID = envelope.correlationID
        let info = envelope.payloads.first.flatMap { first in
            try? first.withUnsafeBytes { try codec.decode(EventsPayload.self, from: $0, userInfo: [:]) }
        }
        guard let child = hosted[childID], child.epoch == envelope.epoch else {
            shared.count { $0.droppedEvents += max(1, info?.lengths.count ?? 1) }
            logger.debug("events for an unknown child dropped", metadata: ["path": "\(envelope.nodePath)"])
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
        // Resolved once per batch: the sink table changes only when the child renders.
        let routes = info.tokens.map { child.route(for: $0) }
        var delivered = 0
        var applied = appliedEvents[childID, default: 0]
        var leaseRanOut = false
        let tokenIndexes = info.tokenIndexes
        // Each event is applied right after it is delivered: the host need not schedule a drain.
        child.holdingDrains {
            PackedValues.forEach(in: envelope.payloads[1], lengths: info.lengths) { index, event in
                // The lease before each event: this thread may have been stopped between two.
                guard silenceBeyondLease() == nil else {
                    leaseRanOut = true
                    return false
                }
                let sequence = envelope.sequence + UInt64(index)
                // Apply the event now, so the outputs it causes are tagged with its sequence and
                // the next flush can acknowledge it together with a snapshot that includes it.
                if let route = routes[Int(tokenIndexes[index])], child.deliver(event: event, via: route) {
                    currentCause = (childID, sequence, 0)
                    child.apply()
                    currentCause = nil
                    delivered += 1
                }
                applied = max(applied, sequence)
                return true
            }
        }
        if leaseRanOut {
            // The child may run elsewhere already: stop hosting, apply and send nothing more.
            fenceIfCutOffFromParent()
            return
        }
        if applied > appliedEvents[childID, default: 0] {
            appliedEvents[childID] = applied
            markDirty(childID)
        }
        eventsInSlice += tokenIndexes.count
        if delivered > 0, !needsRender.contains(childID) { needsRender.append(childID) }
        shared.count {
            $0.events += delivered
            $0.droppedEvents += tokenIndexes.count - delivered
        }
        if delivered > 0 { metrics.eventsApplied.increment(by: Int64(delivered)) }
    }

    /// Renders each child that applied events since it last rendered (once per slice).
    func renderTouchedChildren() {
        guard !needsRender.isEmpty else { return }
        let children = needsRender
        needsRender.removeAll(keepingCapacity: true)
        for childID in children { hosted[childID]?.render() }
    }

    func handleStart(_ envelope: Envelope) {
        let childID = envelope.correlationID
        guard envelope.payloads.count == 2,
            let start = try? envelope.payloads[0].withUnsafeBytes({ try codec.decode(StartPayload.self, from: $0, userInfo: [:]) })
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
        guard hosted.count < configuration.capacity else {
            replyUpstreamError(.refused, "worker \(configuration.name) is at capacity (\(configuration.capacity))", envelope)
            return
        }
        // A new placement of a child this worker already hosts: the old copy ends here, with
        // everything it had queued for the parent (stale under the new epoch).
        discardHosted(childID, because: "placed here again, epoch \(envelope.epoch)")
        do {
            let child = try envelope.payloads[1].withUnsafeBytes { bytes in
                try factory.start(childID: childID, path: envelope.nodePath, props: bytes, propsSequence: envelope.sequence, snapshot: start.snapshot, engine: self)
            }
            child.epoch = envelope.epoch
            hosted[childID] = child
            // Placed before the parent read this worker's DRAIN: it is released like the others.
            drain?.children += 1
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

    /// Stops a hosted child and drops what it had queued for the parent.
    func discardHosted(_ childID: UInt64, because reason: String) {
        if let child = hosted.removeValue(forKey: childID) {
            child.stop()
            logStoppedHosting(child, because: reason)
        }
        pendingRenderings[childID] = nil
        pendingOutputs[childID] = nil
        needsRender.removeAll { $0 == childID }
        appliedEvents[childID] = nil
        acknowledgedEvents[childID] = nil
    }

    /// The end of a placement here, with its epoch (the counterpart of "hosting").
    func logStoppedHosting(_ child: any AnyHostedChild, because reason: String) {
        logger.info(
            "stopped hosting \(child.path), epoch \(child.epoch): \(reason)",
            metadata: ["path": "\(child.path)", "epoch": .stringConvertible(child.epoch)])
    }

    func replyUpstreamError(_ code: ErrorPayload.Code, _ message: String, _ envelope: Envelope, typeName: String? = nil) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message, typeName: typeName)) else { return }
        sendUpstream(kind: .error, correlationID: envelope.correlationID, epoch: envelope.epoch, nodePath: envelope.nodePath, payloads: [payload])
    }

    /// How a hosted child's renderings and outputs leave: queued here, flushed once per loop
    /// iteration (outputs first, then the latest rendering), so a burst costs one message.
    func forwarder(childID: UInt64, path: String, exporter: SinkTable) -> HostedChildForwarder {
        HostedChildForwarder(childID: childID, path: path, exporter: exporter, bound: LoopBound(self, owner: jobs), codec: codec)
    }

    func markDirty(_ childID: UInt64) {
        // A set beside the list: a scan of the list cost a pass of N updates N²/2 comparisons.
        if flushScheduled.insert(childID).inserted { flushOrder.append(childID) }
    }

    func enqueue(rendering bytes: [UInt8], sequence: UInt64, childID: UInt64, path: String) {
        markDirty(childID)
        pendingRenderings[childID] = (bytes, sequence, path)
    }

    func enqueue(output bytes: [UInt8], childID: UInt64, path: String) {
        markDirty(childID)
        var cause: UInt64 = 0
        var ordinal: UInt32 = 0
        if let current = currentCause, current.child == childID {
            cause = current.sequence
            ordinal = current.ordinal
            currentCause?.ordinal += 1
        }
        pendingOutputs[childID, default: PendingOutputs(path: path)].append(bytes, cause: cause, ordinal: ordinal)
    }

    func flushHosted() {
        renderTouchedChildren()
        guard !flushOrder.isEmpty else { return }
        var order = flushOrder
        flushOrder = []
        flushScheduled.removeAll(keepingCapacity: true)
        holdingUpstream = true
        for childID in order { flush(childID) }
        holdingUpstream = false
        // The list's storage is kept for the next flush.
        order.removeAll(keepingCapacity: true)
        if flushOrder.isEmpty { flushOrder = order }
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
        let outputs = pendingOutputs.removeValue(forKey: childID)
        let rendering = pendingRenderings.removeValue(forKey: childID)
        let applied = appliedEvents[childID, default: 0]
        let acknowledge = applied > acknowledgedEvents[childID, default: 0] || releasing
        guard let child = hosted[childID] else { return }
        guard outputs != nil || acknowledge else {
            // A rendering alone is one step by itself.
            if let rendering {
                sendUpstream(
                    kind: .rendering, correlationID: childID, sequence: rendering.sequence, epoch: child.epoch, nodePath: rendering.path,
                    payloads: CollectionOfOne(rendering.bytes))
            }
            return
        }
        let path = outputs?.path ?? child.path
        let values = outputs?.values ?? PackedValues()
        let lengths = values.lengths
        var start = 0
        var byteStart = 0
        while true {
            // As many outputs as one message carries; the last message holds the remaining
            // outputs and the rendering after them.
            let end = start + PackedValues.prefixFitting(
                lengths[start...].lazy.map { Int($0) }, maxCount: PackedValues.maxOutputsPerMessage)
            let isLast = end == lengths.count
            let byteEnd = lengths[start..<end].reduce(byteStart) { $0 + Int($1) }
            // With the acknowledgement, and with any outputs: the parent applies them together
            // with this state, so a parent restored from it after a failover neither loses nor
            // repeats outputs no event of its caused (a worker's, or a grandchild's passed on).
            let snapshot = isLast && (acknowledge || outputs != nil) ? child.snapshot() : nil
            let info = OutputsPayload(
                causes: Array(outputs?.causes[start..<end] ?? []), ordinals: Array(outputs?.ordinals[start..<end] ?? []),
                lengths: Array(lengths[start..<end]), snapshot: snapshot, continues: !isLast,
                renderingSequence: isLast ? rendering?.sequence : nil, released: isLast && releasing ? true : nil)
            guard let header = try? codec.encode(info) else {
                logger.error("an outputs header does not encode", metadata: ["path": "\(path)"])
                return
            }
            var payloads = [header]
            if end > start {
                // The whole flush in one message (the usual case) needs no copy of its outputs.
                payloads.append(start == 0 && isLast ? values.bytes : Array(values.bytes[byteStart..<byteEnd]))
            }
            if isLast, let rendering { payloads.append(rendering.bytes) }
            sendUpstream(
                kind: .outputs, correlationID: childID, acknowledged: isLast && acknowledge ? applied : 0, epoch: child.epoch,
                nodePath: path, payloads: payloads)
            if isLast { break }
            start = end
            byteStart = byteEnd
        }
        if acknowledge { acknowledgedEvents[childID] = applied }
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
        outbox.send(codec: codec) { message in
            transmitUpstream(message, nodePath: nodePath)
            return true
        }
        if upstreamOutbox.isEmpty { swap(&outbox, &upstreamOutbox) }
    }

    private func transmitUpstream(_ message: OutgoingMessage, nodePath: String) {
        let kind = message.kind
        do {
            metrics.bytesOut.increment(by: Int64(message.byteCount))
            try sockets.sendUpstream(message)
            lastSentUpstream = .now
        } catch {
            if upstreamConnectedAt == nil {
                // No connection yet, or its handshake failed (which the monitor reports in words):
                // nothing takes the message. A HELLO goes out again once a handshake succeeds.
                if kind == .hello { helloPending = true }
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
