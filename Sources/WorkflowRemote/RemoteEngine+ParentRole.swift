import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The parent role: placing children on workers and routing their messages back to proxies.
extension RemoteEngine {
    // MARK: Parent role: requests from proxies

    /// The concrete placement for a child, or `nil` to render it locally.
    func resolve(_ placement: RemotePlacement, typeName: @autoclosure () -> String, path: @autoclosure () -> String) -> RemotePlacement? {
        switch placement {
        case .local: nil
        case .configured: configuration.placementTable.placement(typeName: typeName(), path: path())
        default: placement
        }
    }

    func allocateChildID() -> UInt64 {
        defer { nextChildID += 1 }
        return nextChildID
    }

    /// A back-pressure account for a new child.
    func makeOutstandingEvents(path: String) -> OutstandingEvents {
        OutstandingEvents(limit: configuration.maxOutstandingEvents, path: path, logger: logger)
    }

    func register(proxy: any AnyRemoteChildProxy) {
        proxies[proxy.childID] = proxy
        forwardingRoutes[proxy.forwardingPrefix] = proxy.childID
    }

    func start(proxy: any AnyRemoteChildProxy, props: [UInt8]) {
        guard let (id, peer) = chooseWorker(typeName: proxy.typeName, placement: proxy.placement, path: proxy.path) else {
            if let drained = proxy.drainedFrom {
                proxy.fail(.workerDrained(worker: drained, waitingFor: waitingFor(proxy.placement, typeName: proxy.typeName)))
            } else {
                proxy.fail(.noWorker(typeName: proxy.typeName, placement: "\(proxy.placement)"))
            }
            return
        }
        do {
            let start = try codec.encode(StartPayload(typeName: proxy.typeName, snapshot: proxy.snapshot))
            // A new placement: a new fencing token, so anything still on the way from or to an
            // earlier placement of this child is recognisably stale.
            proxy.epoch += 1
            proxy.worker = peer
            peer.children.insert(proxy.childID)
            awaiting.insert(proxy.childID)
            noteRequestSent(childID: proxy.childID, sequence: proxy.propsSequence)
            sendToWorker(
                id, hold: true, kind: .start, correlationID: proxy.childID, sequence: proxy.propsSequence, epoch: proxy.epoch, nodePath: proxy.path,
                payloads: [start, props])
            logger.debug("start", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "correlation": .stringConvertible(proxy.childID)])
            // Events the previous worker never acknowledged are replayed, in order, on top of
            // the snapshot they were not yet part of, batched as any events are. After a drain
            // that is only the events kept here during the move: the old worker's final snapshot
            // holds everything it applied.
            let replay = proxy.unacknowledged.count
            if proxy.hasRestoredEvents {
                // Events that came with the child's snapshot (its node was restored, or moved to
                // another placement): not a failover of this child.
                proxy.restoredEventsSent()
                logger.info(
                    "sending \(replay) events kept with the child's snapshot", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)"])
            } else if let drained = proxy.drainedFrom {
                proxy.placed()
                metrics.handovers.increment()
                logger.info(
                    "moved after \(drained) drained", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "events": .stringConvertible(replay)])
            } else if replay > 0 {
                metrics.failovers.increment()
                metrics.eventsReplayed.increment(by: Int64(replay))
                logger.info("replaying \(replay) unacknowledged events", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)"])
            }
            proxy.lastSentEvent = 0
            sendDueEvents(of: proxy)
        } catch {
            proxy.fail(.refused("START does not encode: \(error)"))
        }
    }

    func update(proxy: any AnyRemoteChildProxy, props: [UInt8]) {
        guard let peer = proxy.worker else { return }
        // Events recorded before the new props go first, as they were sent first.
        sendDueEvents(of: proxy)
        awaiting.insert(proxy.childID)
        // Its worker is draining: the new props go with the START on the next worker, which the
        // settle waits for (the release ends the wait, and the render after it starts the child).
        guard !proxy.isReleasing else { return }
        noteRequestSent(childID: proxy.childID, sequence: proxy.propsSequence)
        sendToWorker(
            peer.id, hold: true, kind: .update, correlationID: proxy.childID, sequence: proxy.propsSequence, epoch: proxy.epoch, nodePath: proxy.path,
            payloads: CollectionOfOne(props))
    }

    /// Stops `proxy`'s child on its worker. `sendingDueEvents: false` when another proxy takes
    /// over the child's unacknowledged events (`RemoteChildProxy.handOver()`).
    func stop(proxy: any AnyRemoteChildProxy, sendingDueEvents: Bool = true) {
        proxies[proxy.childID] = nil
        if forwardingRoutes[proxy.forwardingPrefix] == proxy.childID { forwardingRoutes[proxy.forwardingPrefix] = nil }
        awaiting.remove(proxy.childID)
        inspection.forget(childID: proxy.childID)
        shared.setStatus(nil, path: proxy.path)
        guard let peer = proxy.worker else { return }
        if sendingDueEvents { sendDueEvents(of: proxy) }
        peer.children.remove(proxy.childID)
        endRelease(of: proxy.childID, on: peer)
        proxy.worker = nil
        sendToWorker(peer.id, hold: true, kind: .stop, correlationID: proxy.childID, epoch: proxy.epoch, nodePath: proxy.path, payloads: [])
    }

    /// Publishes a child's new status and logs it, once per change (the proxy calls this only
    /// when the status differs). A child waiting for a worker that has not joined yet is normal
    /// at start, so it is `info`; losing a worker, or a worker's refusal, is a `warning`.
    func statusChanged(path: String, status: RemoteChildStatus) {
        shared.setStatus(status, path: path)
        let level: Logger.Level
        switch status {
        case .starting, .running, .unavailable(.noWorker): level = .info
        case .unavailable: level = .warning
        }
        logger.log(level: level, "child status: \(status)", metadata: ["path": "\(path)", "status": "\(status.name)"])
    }

    func log(error message: String) {
        logger.error("\(message)")
    }

    /// The decoder context for a proxy's renderings and outputs: sinks in them send EVENTs to
    /// the proxy's child.
    func importerUserInfo(for proxy: any AnyRemoteChildProxy) -> [CodingUserInfoKey: any Sendable] {
        let childID = proxy.childID
        let path = proxy.path
        let jobs = self.jobs
        let bound = LoopBound(self, owner: jobs)
        let forwarder = SinkForwarder(
            prefix: proxy.forwardingPrefix,
            send: { token, bytes in
                let event = QueuedEvent(childID: childID, path: path, token: token, bytes: bytes)
                // On the loop already (a middle process passing on its parent's event, or an
                // action sending to a remote child): recorded now, so the snapshot that goes with
                // this iteration's acknowledgement includes it. Otherwise queued for the loop as
                // data (no closure per event).
                if jobs.isOwnerThread {
                    bound.value.sendEvent(event)
                } else {
                    jobs.append(event: event)
                }
            },
            codec: codec,
            outstanding: proxy.outstanding)
        return [.workflowSinkImporter: SinkTransport<any SinkImporter>(forwarder)]
    }

    func sendEvent(_ event: QueuedEvent) {
        let childID = event.childID
        guard let proxy = proxies[childID] else {
            logger.debug("event for a stopped child dropped", metadata: ["path": "\(event.path)"])
            return
        }
        // Kept until acknowledged, so a child whose worker is gone gets it after failover. Sent
        // at the end of this loop iteration, with every other event the child got in it.
        _ = proxy.record(event: event.token, bytes: event.bytes)
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
        guard let (prefix, inner) = SinkForwarder.split(token), let childID = forwardingRoutes[String(prefix)] else { return nil }
        return (childID, String(inner))
    }

    /// Passes an event on to the remote child `childID` as recorded bytes (the same codec at
    /// both hops, so nothing is decoded here). Returns `false` if that child is gone.
    func forward(event bytes: [UInt8], token: String, toChild childID: UInt64) -> Bool {
        guard let proxy = proxies[childID] else { return false }
        // Accepted by this process's parent already: not refused here.
        proxy.outstanding.take(1)
        sendEvent(QueuedEvent(childID: childID, path: proxy.path, token: token, bytes: bytes))
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
        guard let peer = proxy.worker, !proxy.isReleasing else { return }
        let events = proxy.unacknowledged
        var start = events.count
        while start > 0, events[start - 1].sequence > proxy.lastSentEvent { start -= 1 }
        guard start < events.count else { return }
        while start < events.count {
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
            guard let header = try? codec.encode(EventsPayload(tokens: tokens, tokenIndexes: indexes, lengths: packed.lengths)) else { return }
            proxy.lastSentEvent = events[end - 1].sequence
            sendToWorker(
                peer.id, hold: true, kind: .event, correlationID: proxy.childID, sequence: events[start].sequence, epoch: proxy.epoch,
                nodePath: proxy.path, payloads: [header, packed.bytes], packedValues: packed.count)
            // A failed send may have lost the worker (the events wait for the next placement).
            guard proxy.worker === peer else { return }
            start = end
        }
    }

    func chooseWorker(typeName: String, placement: RemotePlacement, path: String) -> (WorkerID, WorkerPeer)? {
        // A draining worker is leaving: nothing new goes there.
        let candidates = workers.filter { $0.value.hostedTypes.contains(typeName) && !$0.value.isDraining }.map { ($0.key, $0.value) }
        let eligible: [(WorkerID, WorkerPeer)]
        switch placement {
        case .local, .configured: return nil
        case .anyWorker: eligible = candidates
        case .worker(let name): eligible = candidates.filter { $0.1.name == name }
        case .pool(let pool): eligible = candidates.filter { $0.1.pool == pool }
        case .hashed(let pool):
            let members = candidates.filter { $0.1.pool == pool }.sorted { $0.1.name < $1.1.name }
            guard !members.isEmpty else { return nil }
            return members[Int(stableHash(path) % UInt64(members.count))]
        }
        return eligible.min { ($0.1.children.count, $0.1.name) < ($1.1.children.count, $1.1.name) }
    }

    // MARK: Parent role: messages from workers

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
        if let peer = workers[peerID] { peer.lastHeard = .now }
        switch envelope.kind {
        case .batch:
            guard let messages = Outbox.split(envelope) else {
                if warnLimited("malformed message from a peer dropped", detail: "a batch's layout does not match its frames", metadata: ["peer": "\(peerID)"]) {
                    replyError(to: peerID, code: .malformedMessage, message: "malformed batch", correlationID: 0)
                }
                return
            }
            for message in messages { handleFromWorker(peerID, frames: message) }
        case .hello: handleHello(peerID, envelope)
        case .rendering, .outputs, .error, .heartbeat, .drain:
            // A peer talking as a worker without having joined (this parent restarted, or took
            // it for dead): tell it to join again rather than wait for it to notice the silence.
            guard workers[peerID] != nil else {
                sendToWorker(peerID, kind: .reconnect, correlationID: 0, nodePath: "", payloads: [])
                return
            }
            switch envelope.kind {
            case .heartbeat: break
            case .drain: if let peer = workers[peerID] { handleDrain(from: peer) }
            default: routeToProxy(peerID, envelope)
            }
        case .goodbye: removeWorker(peerID, reason: workers[peerID]?.isDraining == true ? "left after draining (it said goodbye)" : "left (it said goodbye)")
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
        guard hello.name.utf8.count <= WorkerPeer.maxNameBytes, hello.pool.utf8.count <= WorkerPeer.maxNameBytes else {
            let reason = "a worker or pool name is longer than \(WorkerPeer.maxNameBytes) bytes"
            if warnLimited("HELLO refused", detail: reason, metadata: ["peer": "\(peerID)"]) {
                replyError(to: peerID, code: .refused, message: reason, correlationID: 0)
            }
            return
        }
        guard hello.protocolVersion == remoteProtocolVersion else {
            let reason = "protocol version \(hello.protocolVersion) is not \(remoteProtocolVersion)"
            if warnLimited("HELLO refused", detail: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"]) {
                replyError(to: peerID, code: .refused, message: reason, correlationID: 0)
            }
            return
        }
        if let known = workers[peerID] {
            // HELLO again on a connection that has joined: a worker told to RECONNECT twice, or
            // a peer repeating itself. It is welcomed again and keeps its state (its children);
            // it cannot change its name, which would let one connection pose as many workers.
            guard known.name == hello.name else {
                let reason = "this connection joined as \(known.name)"
                if warnLimited("HELLO refused", detail: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"]) {
                    replyError(to: peerID, code: .refused, message: reason, correlationID: 0)
                }
                return
            }
            logger.debug("repeated HELLO answered", metadata: ["worker": "\(hello.name)"])
            sendWelcome(to: peerID)
            return
        }
        if let (oldID, old) = workers.first(where: { $0.value.name == hello.name && $0.key != peerID }) {
            if old.instance != hello.instance {
                // Another process under a live worker's name (a leftover, or a replacement started
                // during a partition). Is the old one still connected? A send to a peer that has
                // gone fails at once and removes it.
                sendToWorker(oldID, kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            }
            if let old = workers[oldID], old.instance != hello.instance {
                // Refused while the old one is alive: letting each evict the other would swap them
                // over and over, restarting their children every time. The old one's liveness
                // window decides; a refused worker asks again with back-off.
                let reason = "a live worker named \(hello.name) is already connected"
                if warnLimited("HELLO refused: name taken", detail: reason, metadata: ["peer": "\(peerID)", "worker": "\(hello.name)"]) {
                    replyError(to: peerID, code: .nameTaken, message: reason, correlationID: 0)
                }
                return
            }
            // The same worker on a fresh connection (it reconnected), or the old one is gone:
            // the new connection takes its place and its children are placed again.
            removeWorker(oldID, reason: "rejoined on a new connection")
        }
        let peer = WorkerPeer(
            id: peerID, name: hello.name, pool: hello.pool, hostedTypes: Set(hello.hostedTypes), capacity: hello.capacity,
            instance: hello.instance, processID: hello.processID, hostName: hello.hostName)
        workers[peerID] = peer
        metrics.workersJoined.increment()
        logger.info("worker joined", metadata: ["worker": "\(hello.name)", "pool": "\(hello.pool)", "types": .stringConvertible(hello.hostedTypes.count)])
        sendWelcome(to: peerID)
        shared.setWorkers(workers.values.map(\.name))
        for proxy in proxies.values where proxy.worker == nil && peer.hostedTypes.contains(proxy.typeName) {
            proxy.retryIfUnplaced()
        }
    }

    func sendWelcome(to peerID: WorkerID) {
        let welcome = WelcomePayload(
            parentName: configuration.name, heartbeatIntervalMilliseconds: Int(configuration.heartbeatInterval.milliseconds), drains: true)
        guard let payload = try? codec.encode(welcome) else { return }
        sendToWorker(peerID, kind: .welcome, correlationID: 0, nodePath: "", payloads: [payload])
    }

    func routeToProxy(_ peerID: WorkerID, _ envelope: Envelope) {
        // Fencing: only the child's current placement speaks for it. A message from another
        // worker, or from this worker about an earlier placement (an older epoch), is stale.
        guard let proxy = proxies[envelope.correlationID], proxy.worker?.id == peerID, envelope.epoch == proxy.epoch else {
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
            receive(flush, for: proxy)
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
            let flush = WorkerFlush(
                outputs: info.lengths.isEmpty ? [] : envelope.payloads[1], lengths: info.lengths, causes: info.causes,
                ordinals: info.ordinals, continues: info.continues, rendering: info.renderingSequence == nil ? nil : envelope.payloads.last,
                renderingSequence: info.renderingSequence ?? 0, acknowledged: envelope.acknowledged, snapshot: info.snapshot)
            receive(flush, for: proxy)
            if info.released == true { completeRelease(of: proxy) }
        case .error:
            let error = envelope.payloads.first.flatMap { payload in
                try? payload.withUnsafeBytes { try codec.decode(ErrorPayload.self, from: $0, userInfo: [:]) }
            }
            let childError: RemoteChildError
            switch error?.code {
            case .unknownType: childError = .unknownType(error?.typeName ?? proxy.typeName)
            case .undecodableProps: childError = .undecodableProps(typeName: proxy.typeName, reason: error?.message ?? "")
            default: childError = .refused(error?.message ?? "unreadable error")
            }
            if let peer = proxy.worker {
                peer.children.remove(proxy.childID)
                endRelease(of: proxy.childID, on: peer)
            }
            proxy.fail(childError)
            awaiting.remove(proxy.childID)
            settleChanged = true
        default:
            break
        }
    }

    /// Hands a worker's flush to its proxy, and ends the settle's wait for it if it answers the
    /// child's current props.
    func receive(_ flush: WorkerFlush, for proxy: any AnyRemoteChildProxy) {
        let workerName = proxy.worker?.name ?? "?"
        if !flush.lengths.isEmpty { metrics.outputsReceived.increment(by: Int64(flush.lengths.count)) }
        if let rendering = flush.rendering { noteRendering(childID: proxy.childID, bytes: rendering.count) }
        if proxy.receive(flush: flush, workerName: workerName) { settleChanged = true }
        if !proxy.isAwaitingRendering, awaiting.remove(proxy.childID) != nil { noteRoundTrip(of: proxy) }
    }

    func removeWorker(_ peerID: WorkerID, reason: String) {
        guard let peer = workers.removeValue(forKey: peerID) else { return }
        // Held messages for it are moot; its children's events wait for their next placement.
        peer.outbox.removeAll()
        logger.warning("worker left: \(peer.name) \(reason)", metadata: ["worker": "\(peer.name)"])
        metrics.workersLeft.increment()
        if !peer.releasing.isEmpty {
            logger.warning(
                "\(peer.name) left before handing over \(peer.releasing.count) children; they move from their last acknowledged state",
                metadata: ["worker": "\(peer.name)"])
        }
        for id in peer.children {
            guard let proxy = proxies[id], proxy.worker === peer else { continue }
            proxy.fail(.workerUnavailable(worker: peer.name, reason: reason))
            awaiting.remove(id)
        }
        peer.children.removeAll()
        shared.setWorkers(workers.values.map(\.name))
    }

    func replyError(to peerID: WorkerID, code: ErrorPayload.Code, message: String, correlationID: UInt64) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message)) else { return }
        sendToWorker(peerID, kind: .error, correlationID: correlationID, nodePath: "", payloads: [payload])
    }

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
        peer.outbox.sendClosedBatches(codec: codec) { message in
            transmitEarly(message, to: peer)
        }
    }

    /// `transmit` for an early batch: a worker found gone is marked for `sendHeld`, not removed.
    private func transmitEarly(_ message: OutgoingMessage, to peer: WorkerPeer) -> Bool {
        peer.lastSent = .now
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
        outbox.send(codec: codec) { message in
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
        _ peerID: WorkerID, hold: Bool = false, kind: MessageKind, correlationID: UInt64, sequence: UInt64 = 0, epoch: UInt64 = 0,
        nodePath: String, payloads: some Collection<[UInt8]>, packedValues: Int = 0
    ) {
        let header = EnvelopeHeader(
            kind: kind, codec: codec.id, correlationID: correlationID, sequence: sequence, acknowledged: 0, epoch: epoch, nodePath: nodePath)
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
            if peer.outbox.hasClosedBatch { sendClosedBatches(of: peer) }
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
        workers[peerID]?.lastSent = .now
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
