import Foundation
import Logging
import Tracing
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The parent role, outbound: children's events (numbered and kept in their ledger until
/// acknowledged, packed into EVENT messages when due) and every other message to workers, held
/// per worker until the render pass settles (or sent early once a batch is full) and sent as one
/// atomic batch each.
extension ParentDriver {
    // MARK: Events

    /// An event a remote child's sink was sent (`SinkForwarder`, queued on the loop): numbered
    /// and kept until acknowledged, and sent at the end of this loop iteration. `context`: the
    /// sender's trace context (a runtime that traces), continued by the send's span.
    func sendEvent(_ event: QueuedEvent, context: ServiceContext? = nil) {
        let childID = event.childID
        guard let proxy = proxies[childID] else {
            logger.debug("event for a stopped child dropped", metadata: ["path": "\(event.path)"])
            return
        }
        // Kept until acknowledged, so a child whose worker is gone gets it after failover. Sent
        // at the end of this loop iteration, with every other event the child got in it.
        let sequence = proxy.record(event: event.token, bytes: event.bytes)
        if let context { eventTraceContexts.record(context, childID: childID, sequence: sequence) }
        inspection.eventsSent[childID, default: 0] += 1
        metrics.eventsSent.increment()
        // Sent at the end of this loop iteration; a child whose worker is draining gets it on its
        // next worker (`sendDueEvents(of:)` holds it back meanwhile).
        if !proxy.eventsDue {
            proxy.eventsDue = true
            childrenWithEventsDue.append(childID)
        }
    }

    /// Where an event for a sink this process passed on goes when the hosted child that passed
    /// it on no longer knows the token (it restarted here, or was placed here after a failover,
    /// and has not rendered that sink again yet): to the remote child whose forwarding prefix
    /// the token carries, with the child's own token. `nil` for any other token.
    func forwardingRoute(for token: String) -> (childID: UInt64, token: String)? {
        guard let (prefix, inner) = SinkToken.forwarded(token), let childID = forwardingRoutes[String(prefix)] else { return nil }
        return (childID, String(inner))
    }

    /// Passes an event on to the remote child `childID` as recorded bytes (the same codec at
    /// both hops, so nothing is decoded here). Returns `false` if that child is gone.
    /// `context`: the trace context the event arrived with (a nested worker passes it on).
    func forward(event bytes: [UInt8], token: String, toChild childID: UInt64, context: ServiceContext? = nil) -> Bool {
        guard let proxy = proxies[childID] else { return false }
        // Accepted by this process's parent already: not refused here.
        proxy.outstanding.take(1)
        sendEvent(QueuedEvent(childID: childID, path: proxy.path, token: token, bytes: bytes), context: context)
        return true
    }

    /// Sends every event recorded in this loop iteration and not sent yet, per child in as few
    /// EVENT messages as the frame limit allows.
    func sendDueEvents() {
        guard !childrenWithEventsDue.isEmpty else { return }
        let children = childrenWithEventsDue
        childrenWithEventsDue.removeAll(keepingCapacity: true)
        for childID in children {
            guard let proxy = proxies[childID] else { continue }
            sendDueEvents(of: proxy)
        }
    }

    /// Sends `proxy`'s unacknowledged events after the last one sent to its current placement,
    /// in order, up to `PackedValues.maxEventsPerMessage` per EVENT message (packed in one frame
    /// after the batch's header). Where a message ends does not matter to the worker: it applies
    /// each event on its own.
    func sendDueEvents(of proxy: any AnyRemoteChildProxy) {
        proxy.eventsDue = false
        // A child whose worker is draining: its events wait for the next placement.
        guard let target = parent.eventTarget(of: proxy.childID) else { return }
        let (worker, epoch, lastSent) = target
        let events = proxy.events(after: lastSent)
        var start = events.startIndex
        while start < events.endIndex {
            let end = start + PackedValues.prefixFitting(
                events[start...].lazy.map { $0.bytes.count }, maxCount: PackedValues.maxEventsPerMessage)
            var tokens: [String] = []
            var indexes: [UInt32] = []
            indexes.reserveCapacity(end - start)
            var packed = PackedValues()
            packed.reserveCapacity(count: end - start, byteCount: events[start..<end].reduce(0) { $0 + $1.bytes.count })
            for event in events[start..<end] {
                // Usually one token (one sink) per batch: a linear search beats hashing.
                if let index = tokens.lastIndex(of: event.token) {
                    indexes.append(UInt32(index))
                } else {
                    indexes.append(UInt32(tokens.count))
                    tokens.append(event.token)
                }
                packed.append(event.bytes)
            }
            var payload = EventsPayload(tokens: tokens, tokenIndexes: indexes, lengths: packed.lengths)
            if !eventTraceContexts.isEmpty, let tracer, let peer = workers[worker] {
                payload.traceparents = traceSends(of: events[start..<end], for: proxy, to: peer, tracer: tracer)
            }
            guard let header = try? codec.encode(payload) else { return }
            parent.eventsSent(to: proxy.childID, through: events[end - 1].sequence, at: now)
            sendToWorker(
                worker, hold: true, kind: .event, correlationID: proxy.childID, sequence: events[start].sequence, epoch: epoch,
                nodePath: proxy.path, payloads: [header, packed.bytes], packedValues: packed.count)
            // A failed send may have lost the worker (the events wait for the next placement).
            guard parent.host(of: proxy.childID) == worker else { return }
            start = end
        }
    }

    /// Makes a send span for each traced event of `events` (a message's share) and returns
    /// their `traceparent`s for the EVENT ("" for an untraced one), or `nil` when none is traced
    /// or `peer` speaks a protocol without trace context (the spans are still made here).
    private func traceSends(
        of events: ArraySlice<ChildEventLedger.Event>, for proxy: any AnyRemoteChildProxy, to peer: WorkerPeer, tracer: any Tracer
    ) -> [String]? {
        var traceparents: [String] = []
        var anyTraced = false
        for event in events {
            guard let context = eventTraceContexts.take(childID: proxy.childID, sequence: event.sequence) else {
                traceparents.append("")
                continue
            }
            let span = tracer.startSpan(SpanNames.sendEvent, context: context, ofKind: .producer)
            span.attributes[SpanNames.tokenAttribute] = event.token
            span.attributes[SpanNames.pathAttribute] = proxy.path
            span.attributes[SpanNames.workerAttribute] = peer.name
            span.attributes[SpanNames.sequenceAttribute] = Int64(event.sequence)
            if peer.carriesTraceContext, let traceparent = TraceParent.inject(span.context, with: tracer) {
                traceparents.append(traceparent)
                anyTraced = true
            } else {
                traceparents.append("")
            }
            span.end()
        }
        return anyTraced ? traceparents : nil
    }

    // MARK: Held messages

    /// Events recorded in this iteration, then every held message, one batch per worker.
    func sendHeld() {
        // A worker an early batch could not reach is handled first: what is held for it is moot.
        removeWorkersUnreachableEarly()
        sendDueEvents()
        if !workersWithHeld.isEmpty {
            var peers = workersWithHeld
            workersWithHeld = []
            for peer in peers {
                peer.isListedWithHeld = false
                sendOutbox(of: peer)
            }
            // The list's storage is kept for the next time (unless a send held more meanwhile).
            peers.removeAll(keepingCapacity: true)
            if workersWithHeld.isEmpty { workersWithHeld = peers }
        }
        // Early batches of the events just sent.
        removeWorkersUnreachableEarly()
    }

    /// Sends the batches of `peer`'s held messages that are full (`Outbox.sendClosedBatches`)
    /// now rather than at the end of the pass, so the worker starts on them while the pass
    /// renders the rest: a pass that updates a thousand children of one worker otherwise had
    /// the worker idle until the pass ended, and this process idle while the worker worked.
    /// What reaches the worker, and in which order and batches, is the same.
    ///
    /// A send that finds the worker gone does not remove it here, in the middle of a render
    /// pass (removing it fails its children's proxies, and reading its last messages could hand
    /// renderings to proxies mid-pass): it is marked, nothing more is sent to it, and the next
    /// `sendHeld` (the settle's first step, or the loop iteration's end) removes it as a failed
    /// send there would.
    private func sendClosedBatches(of peer: WorkerPeer) {
        guard !peer.isUnreachable, workers[peer.id] === peer else { return }
        peer.outbox.sendClosedBatches(codec: codec, packing: peer.packing) { message in
            transmitEarly(message, to: peer)
        }
    }

    /// `transmit` for an early batch: a worker found gone is marked for `sendHeld`, not removed.
    private func transmitEarly(_ message: OutgoingMessage, to peer: WorkerPeer) -> Bool {
        parent.sent(to: peer.id, at: now)
        do {
            metrics.bytesOut.increment(by: Int64(message.byteCount))
            try sockets.sendToListenerPeer(peer.id, message: message)
            return true
        } catch {
            guard error.isHostUnreachable else {
                // A full send queue: dropped, as `transmit` drops it (events stay unacknowledged).
                warnLimited("cannot send to a worker", detail: "\(message.kind): \(error)", metadata: ["worker": "\(peer.name)"])
                return true
            }
            peer.isUnreachable = true
            workersUnreachableEarly.append(peer)
            return false
        }
    }

    /// Removes the workers an early batch found gone (`sendClosedBatches(of:)`), as a failed
    /// send in `transmit` does: after reading what they sent last, so an orderly leave is
    /// reported as one.
    private func removeWorkersUnreachableEarly() {
        guard !workersUnreachableEarly.isEmpty else { return }
        let peers = workersUnreachableEarly
        workersUnreachableEarly.removeAll()
        for peer in peers where workers[peer.id] === peer {
            lost(peer.id)
        }
    }

    /// Sends what `peer`'s outbox holds, batched. The outbox is taken out while it is sent (a
    /// failed send may read the workers' socket, and what that holds lands in a fresh one), and
    /// its storage goes back for the next messages.
    func sendOutbox(of peer: WorkerPeer) {
        guard workers[peer.id] === peer, !peer.outbox.isEmpty else { return }
        var outbox = Outbox()
        swap(&outbox, &peer.outbox)
        outbox.send(codec: codec, packing: peer.packing) { message in
            transmit(message, to: peer.id, nodePath: "")
            // A failed send removed the worker: its other messages are moot.
            return workers[peer.id] === peer
        }
        if peer.outbox.isEmpty { swap(&outbox, &peer.outbox) }
    }

    /// Sends a message to a worker; with `hold`, at the end of the pass or loop iteration, in a
    /// batch with the worker's other held messages (`sendHeld`). A message sent at once first
    /// sends what is held for that worker, so the worker sees them in order.
    func sendToWorker(
        _ peerID: WorkerID, hold: Bool = false, kind: MessageKind, correlationID: UInt64, sequence: UInt64 = 0, acknowledged: UInt64 = 0,
        epoch: UInt64 = 0, nodePath: String, payloads: some Collection<[UInt8]>, packedValues: Int = 0
    ) {
        let header = EnvelopeHeader(
            kind: kind, codec: codec.id, correlationID: correlationID, sequence: sequence, acknowledged: acknowledged, epoch: epoch,
            nodePath: nodePath)
        let peer = workers[peerID]
        if hold, let peer {
            do {
                try peer.outbox.append(header, payloads: payloads, packedValues: packedValues)
            } catch {
                warnLimited("cannot send to a worker", detail: "\(kind): \(error)", metadata: ["path": "\(nodePath)"])
                return
            }
            if !peer.isListedWithHeld {
                peer.isListedWithHeld = true
                workersWithHeld.append(peer)
            }
            if peer.outbox.hasClosedBatch(packing: peer.packing) { sendClosedBatches(of: peer) }
            return
        }
        var outbox = Outbox()
        swap(&outbox, &immediateOutbox)
        defer {
            outbox.removeAll()
            swap(&outbox, &immediateOutbox)
        }
        do {
            try outbox.append(header, payloads: payloads, packedValues: packedValues)
        } catch {
            warnLimited("cannot send to a worker", detail: "\(kind): \(error)", metadata: ["path": "\(nodePath)"])
            return
        }
        if let peer {
            sendOutbox(of: peer)
            guard workers[peerID] != nil else { return }
        }
        outbox.send(codec: codec) { message in
            transmit(message, to: peerID, nodePath: nodePath)
            return true
        }
    }

    private func transmit(_ message: OutgoingMessage, to peerID: WorkerID, nodePath: String) {
        let kind = message.kind
        parent.sent(to: peerID, at: now)
        do {
            metrics.bytesOut.increment(by: Int64(message.byteCount))
            try sockets.sendToListenerPeer(peerID, message: message)
        } catch {
            // A reply to a peer that is not a worker (an answer to garbage) is simply dropped:
            // nothing is queued for it in this process, whatever it sends.
            guard workers[peerID] != nil else { return }
            // Only a peer that is gone is a lost worker. A full send queue (EAGAIN) is a
            // transient overload: the message is dropped here, and an event in it stays in its
            // child's unacknowledged list (bounded below the queue by `maxOutstandingEvents`).
            guard error.isHostUnreachable else {
                let worker = workers[peerID]?.name ?? "?"
                warnLimited("cannot send to a worker", detail: "\(kind): \(error)", metadata: ["worker": "\(worker)", "path": "\(nodePath)"])
                return
            }
            lost(peerID)
        }
    }

    /// A send found the worker `peerID` gone (its connection closed).
    private func lost(_ peerID: WorkerID) {
        // The peer may have said GOODBYE after the last poll: read what it sent first, so an
        // orderly leave is reported as one and not as a lost worker. (Only here: draining on
        // every failed send would let a peer that never reads keep the loop in this drain.)
        if !isDrainingAfterSendFailure {
            isDrainingAfterSendFailure = true
            drainListener()
            isDrainingAfterSendFailure = false
        }
        guard workers[peerID] != nil else { return }
        removeWorker(peerID, reason: "is unreachable (its connection closed)")
    }
}
