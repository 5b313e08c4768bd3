import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The remote runtime's state machine, confined to its loop thread.
///
/// As a parent it places remote children on workers, sends START/UPDATE/STOP/EVENT and routes
/// RENDERING/OUTPUTS/ERROR back to the children's proxies. As a worker it hosts children for its
/// parent and forwards their renderings and outputs. Every message from a peer is checked; a bad
/// one is logged (and answered with ERROR where the protocol allows) and never stops the loop.
final class RemoteEngine {
    let configuration: RemoteRuntimeConfiguration
    let codec: any WireCodec
    let logger: Logger
    private let sockets: LoopSockets
    private let jobs: RemoteJobQueue
    private let shared: RuntimeSharedState
    /// The runtime this engine drives; set by `RemoteRuntime` right after creating the engine.
    weak var runtime: RemoteRuntime?

    // Parent role.
    private var workers: [WorkerID: WorkerPeer] = [:]
    private var proxies: [UInt64: any AnyRemoteChildProxy] = [:]
    private var awaiting: Set<UInt64> = []
    private var nextChildID: UInt64 = 1
    private var settleChanged = false
    private var isDrainingAfterSendFailure = false

    // Worker role.
    private var hosted: [UInt64: any AnyHostedChild] = [:]
    /// The latest rendering of each hosted child since the last flush (only the latest is sent).
    private var pendingRenderings: [UInt64: (bytes: [UInt8], sequence: UInt64, path: String)] = [:]
    private var pendingOutputs: [UInt64: PendingOutputs] = [:]
    /// The event being applied by a hosted child's drain, to tag the outputs it causes.
    private var currentCause: (child: UInt64, sequence: UInt64, ordinal: UInt32)?
    /// Per hosted child: the last event applied, and the last acknowledged upstream.
    private var appliedEvents: [UInt64: UInt64] = [:]
    private var acknowledgedEvents: [UInt64: UInt64] = [:]
    private var flushOrder: [UInt64] = []
    private var lastSentUpstream = ContinuousClock.now
    private var lastHeardUpstream = ContinuousClock.now
    /// Reconnection attempts since the parent last answered (for exponential backoff).
    private var reconnectAttempts = 0
    private var shuttingDown = false

    init(configuration: RemoteRuntimeConfiguration, sockets: LoopSockets, jobs: RemoteJobQueue, shared: RuntimeSharedState) {
        self.configuration = configuration
        self.codec = BinaryWireCodec()
        self.logger = configuration.logger
        self.sockets = sockets
        self.jobs = jobs
        self.shared = shared
    }

    // MARK: The loop

    func run() {
        if sockets.hasUpstream { sendHello() }
        while true {
            let ready = sockets.poll(timeout: nextTimeout())
            let (batch, stopRequested) = jobs.takeAll()
            for job in batch { job() }
            if ready.security { serviceSecurity() }
            if ready.listener { drainListener() }
            if ready.upstream { drainUpstream() }
            flushHosted()
            runTimers()
            if stopRequested {
                if !shuttingDown { beginShutdown() }
                break
            }
        }
        sockets.close()
        shared.markStopped()
    }

    /// Waits (on this thread) until every START/UPDATE sent by the last render pass has its
    /// rendering, or the request deadline passes. Returns whether any arrived.
    func settle() -> Bool {
        settleChanged = false
        let deadline = ContinuousClock.now + configuration.requestTimeout
        while !awaiting.isEmpty {
            let now = ContinuousClock.now
            if now >= deadline {
                for id in awaiting {
                    guard let proxy = proxies[id] else { continue }
                    let worker = proxy.worker?.name ?? "?"
                    logger.warning("no rendering within the request deadline", metadata: ["path": "\(proxy.path)", "worker": "\(worker)"])
                    proxy.fail(.workerUnavailable(worker: worker, reason: "no answer within \(configuration.requestTimeout)"))
                }
                awaiting.removeAll()
                return true
            }
            let ready = sockets.poll(timeout: min(deadline - now, .milliseconds(50)), listenerOnly: true)
            if ready.security { serviceSecurity() }
            if ready.listener { drainListener() }
            runTimers()
        }
        // Hosted children's renderings are flushed by the loop once this pass is over: taking
        // their snapshots here could re-enter the host that is settling.
        return settleChanged
    }

    func beginShutdown() {
        guard !shuttingDown else { return }
        shuttingDown = true
        for (_, child) in hosted { child.stop() }
        hosted.removeAll()
        flushHosted()
        if sockets.hasUpstream { sendUpstream(kind: .goodbye, correlationID: 0, nodePath: "", payloads: []) }
        for (id, peer) in workers {
            for proxyID in peer.children { proxies[proxyID].map { sendToWorker(id, kind: .stop, correlationID: proxyID, nodePath: $0.path, payloads: []) } }
        }
    }

    private func nextTimeout() -> Duration {
        configuration.heartbeatInterval
    }

    // MARK: Parent role: requests from proxies

    /// The concrete placement for a child, or `nil` to render it locally.
    func resolve(_ placement: RemotePlacement, typeName: String, path: String) -> RemotePlacement? {
        switch placement {
        case .local: nil
        case .configured: configuration.placementTable.placement(typeName: typeName, path: path)
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
    }

    func start(proxy: any AnyRemoteChildProxy, props: [UInt8]) {
        guard let (id, peer) = chooseWorker(typeName: proxy.typeName, placement: proxy.placement, path: proxy.path) else {
            proxy.fail(.noWorker(typeName: proxy.typeName, placement: "\(proxy.placement)"))
            return
        }
        do {
            let start = try codec.encode(StartPayload(typeName: proxy.typeName, snapshot: proxy.snapshot))
            proxy.worker = peer
            peer.children.insert(proxy.childID)
            awaiting.insert(proxy.childID)
            sendToWorker(id, kind: .start, correlationID: proxy.childID, sequence: proxy.propsSequence, nodePath: proxy.path, payloads: [start, props])
            logger.debug("start", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "correlation": "\(proxy.childID)"])
            // Events the previous worker never acknowledged are replayed, in order, on top of
            // the snapshot they were not yet part of.
            let replay = proxy.unacknowledged
            if !replay.isEmpty {
                logger.info("replaying \(replay.count) unacknowledged events", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)"])
            }
            for event in replay {
                sendEventMessage(to: id, proxy: proxy, sequence: event.sequence, token: event.token, bytes: event.bytes)
            }
        } catch {
            proxy.fail(.refused("START does not encode: \(error)"))
        }
    }

    func update(proxy: any AnyRemoteChildProxy, props: [UInt8]) {
        guard let peer = proxy.worker else { return }
        awaiting.insert(proxy.childID)
        sendToWorker(peer.id, kind: .update, correlationID: proxy.childID, sequence: proxy.propsSequence, nodePath: proxy.path, payloads: [props])
    }

    func stop(proxy: any AnyRemoteChildProxy) {
        proxies[proxy.childID] = nil
        awaiting.remove(proxy.childID)
        shared.setStatus(nil, path: proxy.path)
        guard let peer = proxy.worker else { return }
        peer.children.remove(proxy.childID)
        proxy.worker = nil
        sendToWorker(peer.id, kind: .stop, correlationID: proxy.childID, nodePath: proxy.path, payloads: [])
    }

    func statusChanged(path: String, status: RemoteChildStatus) {
        shared.setStatus(status, path: path)
        if case .unavailable(let error) = status {
            logger.error("remote child unavailable: \(error)", metadata: ["path": "\(path)"])
        }
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
            prefix: "c\(childID)",
            send: { token, bytes in
                jobs.append { bound.value.sendEvent(childID: childID, path: path, token: token, event: bytes) }
            },
            codec: codec,
            outstanding: proxy.outstanding)
        return [.workflowSinkImporter: forwarder]
    }

    private func sendEvent(childID: UInt64, path: String, token: String, event: [UInt8]) {
        guard let proxy = proxies[childID] else {
            logger.debug("event for a stopped child dropped", metadata: ["path": "\(path)"])
            return
        }
        // Kept until acknowledged, so a child whose worker is gone gets it after failover.
        let sequence = proxy.record(event: token, bytes: event)
        guard let peer = proxy.worker else { return }
        sendEventMessage(to: peer.id, proxy: proxy, sequence: sequence, token: token, bytes: event)
    }

    private func sendEventMessage(to peer: WorkerID, proxy: any AnyRemoteChildProxy, sequence: UInt64, token: String, bytes: [UInt8]) {
        guard let header = try? codec.encode(EventPayload(token: token)) else { return }
        sendToWorker(peer, kind: .event, correlationID: proxy.childID, sequence: sequence, nodePath: proxy.path, payloads: [header, bytes])
    }

    private func chooseWorker(typeName: String, placement: RemotePlacement, path: String) -> (WorkerID, WorkerPeer)? {
        let candidates = workers.filter { $0.value.hostedTypes.contains(typeName) }.map { ($0.key, $0.value) }
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

    private func drainListener() {
        var budget = 10_000
        while budget > 0, let (peerID, frames) = sockets.receiveFromListener() {
            budget -= 1
            handleFromWorker(peerID, frames: frames)
        }
    }

    private func handleFromWorker(_ peerID: WorkerID, frames: [[UInt8]]) {
        let envelope: Envelope
        do {
            envelope = try Envelope(frames: frames, limits: .default)
        } catch {
            logger.warning("malformed message from a peer dropped: \(error)", metadata: ["peer": "\(peerID)"])
            replyError(to: peerID, code: .malformedMessage, message: "\(error)", correlationID: 0)
            return
        }
        if let peer = workers[peerID] { peer.lastHeard = .now }
        switch envelope.kind {
        case .hello: handleHello(peerID, envelope)
        case .rendering, .outputs, .error:
            guard workers[peerID] != nil else {
                sendToWorker(peerID, kind: .reconnect, correlationID: 0, nodePath: "", payloads: [])
                return
            }
            routeToProxy(peerID, envelope)
        case .heartbeat: break
        case .goodbye: removeWorker(peerID, reason: "it left")
        default:
            logger.warning("unexpected \(envelope.kind) from a worker dropped", metadata: ["peer": "\(peerID)"])
            replyError(to: peerID, code: .malformedMessage, message: "unexpected \(envelope.kind)", correlationID: envelope.correlationID)
        }
    }

    private func handleHello(_ peerID: WorkerID, _ envelope: Envelope) {
        guard let payload = envelope.payloads.first,
            let hello = try? payload.withUnsafeBytes({ try codec.decode(HelloPayload.self, from: $0, userInfo: [:]) })
        else {
            replyError(to: peerID, code: .malformedMessage, message: "HELLO payload does not decode", correlationID: 0)
            return
        }
        guard hello.protocolVersion == remoteProtocolVersion else {
            replyError(to: peerID, code: .refused, message: "protocol version \(hello.protocolVersion) is not \(remoteProtocolVersion)", correlationID: 0)
            return
        }
        // A worker that rejoins under the same name replaces its old connection.
        if let (oldID, _) = workers.first(where: { $0.value.name == hello.name && $0.key != peerID }) {
            removeWorker(oldID, reason: "it rejoined")
        }
        let peer = WorkerPeer(id: peerID, name: hello.name, pool: hello.pool, hostedTypes: Set(hello.hostedTypes), capacity: hello.capacity)
        workers[peerID] = peer
        logger.info("worker joined", metadata: ["worker": "\(hello.name)", "pool": "\(hello.pool)", "types": "\(hello.hostedTypes.count)"])
        if let welcome = try? codec.encode(WelcomePayload(parentName: configuration.name, heartbeatIntervalMilliseconds: Int(configuration.heartbeatInterval.milliseconds))) {
            sendToWorker(peerID, kind: .welcome, correlationID: 0, nodePath: "", payloads: [welcome])
        }
        shared.setWorkers(workers.values.map(\.name))
        for proxy in proxies.values where proxy.worker == nil && peer.hostedTypes.contains(proxy.typeName) {
            proxy.retryIfUnplaced()
        }
    }

    private func routeToProxy(_ peerID: WorkerID, _ envelope: Envelope) {
        guard let proxy = proxies[envelope.correlationID], proxy.worker?.id == peerID else {
            logger.debug("\(envelope.kind) for an unknown or moved child dropped", metadata: ["path": "\(envelope.nodePath)"])
            return
        }
        switch envelope.kind {
        case .rendering:
            guard let payload = envelope.payloads.first else { return }
            let workerName = proxy.worker?.name ?? "?"
            let changed = payload.withUnsafeBytes { proxy.receive(rendering: $0, propsSequence: envelope.sequence, workerName: workerName) }
            if changed { settleChanged = true }
            if !proxy.isAwaitingRendering { awaiting.remove(proxy.childID) }
        case .outputs:
            guard let first = envelope.payloads.first,
                let info = try? first.withUnsafeBytes({ try codec.decode(OutputsPayload.self, from: $0, userInfo: [:]) }),
                info.causes.count == envelope.payloads.count - 1, info.ordinals.count == info.causes.count
            else {
                logger.warning("malformed outputs dropped", metadata: ["path": "\(proxy.path)"])
                return
            }
            for (index, payload) in envelope.payloads.dropFirst().enumerated() {
                payload.withUnsafeBytes { proxy.receive(output: $0, cause: info.causes[index], ordinal: info.ordinals[index]) }
            }
            proxy.acknowledge(upTo: envelope.acknowledged, snapshot: info.snapshot)
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
            proxy.worker?.children.remove(proxy.childID)
            proxy.fail(childError)
            awaiting.remove(proxy.childID)
            settleChanged = true
        default:
            break
        }
    }

    private func removeWorker(_ peerID: WorkerID, reason: String) {
        guard let peer = workers.removeValue(forKey: peerID) else { return }
        logger.warning("worker left: \(reason)", metadata: ["worker": "\(peer.name)"])
        for id in peer.children {
            guard let proxy = proxies[id] else { continue }
            proxy.fail(.workerUnavailable(worker: peer.name, reason: reason))
            awaiting.remove(id)
        }
        peer.children.removeAll()
        shared.setWorkers(workers.values.map(\.name))
    }

    private func replyError(to peerID: WorkerID, code: ErrorPayload.Code, message: String, correlationID: UInt64) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message)) else { return }
        sendToWorker(peerID, kind: .error, correlationID: correlationID, nodePath: "", payloads: [payload])
    }

    private func sendToWorker(
        _ peerID: WorkerID, kind: MessageKind, correlationID: UInt64, sequence: UInt64 = 0, nodePath: String, payloads: [[UInt8]]
    ) {
        let envelope = Envelope(kind: kind, codec: codec.id, correlationID: correlationID, sequence: sequence, acknowledged: 0, nodePath: nodePath, payloads: payloads)
        workers[peerID]?.lastSent = .now
        do {
            try sockets.sendToListenerPeer(peerID, frames: envelope.encodeFrames())
        } catch {
            // The peer may have said GOODBYE after the last poll: read what it sent first, so an
            // orderly leave is reported as one and not as a lost worker.
            if !isDrainingAfterSendFailure {
                isDrainingAfterSendFailure = true
                drainListener()
                isDrainingAfterSendFailure = false
            }
            guard workers[peerID] != nil else { return }
            logger.warning("cannot send \(kind) to a worker: \(error)", metadata: ["path": "\(nodePath)"])
            // Only a peer that is gone is a lost worker. A full send queue (EAGAIN) is a
            // transient overload: the message is dropped here, and an event in it stays in its
            // child's unacknowledged list (bounded below the queue by `maxOutstandingEvents`).
            if (error as? ZMQError)?.isHostUnreachable == true {
                removeWorker(peerID, reason: "unreachable (\(error))")
            }
        }
    }

    // MARK: Worker role

    private func sendHello() {
        let hello = HelloPayload(
            name: configuration.name, pool: configuration.pool, hostedTypes: configuration.registry.typeNames,
            capacity: configuration.capacity, protocolVersion: remoteProtocolVersion)
        guard let payload = try? codec.encode(hello) else { return }
        sendUpstream(kind: .hello, correlationID: 0, nodePath: "", payloads: [payload])
    }

    private func drainUpstream() {
        var budget = 10_000
        while budget > 0, let frames = sockets.receiveFromUpstream() {
            budget -= 1
            lastHeardUpstream = .now
            handleFromParent(frames)
        }
    }

    private func handleFromParent(_ frames: [[UInt8]]) {
        let envelope: Envelope
        do {
            envelope = try Envelope(frames: frames, limits: .default)
        } catch {
            logger.warning("malformed message from the parent dropped: \(error)")
            return
        }
        let childID = envelope.correlationID
        switch envelope.kind {
        case .welcome:
            reconnectAttempts = 0
            shared.setWelcomed(true)
            logger.info("welcomed by the parent")
        case .start:
            handleStart(envelope)
        case .update:
            guard let child = hosted[childID], let props = envelope.payloads.first else {
                replyUpstreamError(.unknownChild, "UPDATE for an unknown child", envelope)
                return
            }
            do {
                try props.withUnsafeBytes { try child.update(props: $0, propsSequence: envelope.sequence) }
                // Render for the new props now rather than in a later loop job: the rendering
                // then leaves with this iteration's flush, a thread wake-up sooner.
                child.drain()
                shared.count { $0.updated += 1 }
            } catch {
                shared.count { $0.errors += 1 }
                replyUpstreamError(.undecodableProps, "\(error)", envelope)
            }
        case .stop:
            if let child = hosted.removeValue(forKey: childID) {
                child.stop()
                pendingRenderings[childID] = nil
                pendingOutputs[childID] = nil
                appliedEvents[childID] = nil
                acknowledgedEvents[childID] = nil
                shared.count { $0.stopped += 1 }
                logger.debug("stopped", metadata: ["path": "\(envelope.nodePath)"])
            }
        case .event:
            guard envelope.payloads.count == 2, let child = hosted[childID],
                let info = try? envelope.payloads[0].withUnsafeBytes({ try codec.decode(EventPayload.self, from: $0, userInfo: [:]) })
            else {
                shared.count { $0.droppedEvents += 1 }
                logger.debug("event for an unknown child dropped", metadata: ["path": "\(envelope.nodePath)"])
                return
            }
            // Apply the event now, so the outputs it causes are tagged with its sequence and the
            // next flush can acknowledge it together with a snapshot that includes it.
            let delivered = envelope.payloads[1].withUnsafeBytes { child.deliver(event: $0, token: info.token) }
            if delivered {
                currentCause = (childID, envelope.sequence, 0)
                child.drain()
                currentCause = nil
            }
            if envelope.sequence > appliedEvents[childID, default: 0] {
                appliedEvents[childID] = envelope.sequence
                markDirty(childID)
            }
            shared.count { delivered ? ($0.events += 1) : ($0.droppedEvents += 1) }
        case .error:
            logger.warning("the parent reported an error", metadata: ["path": "\(envelope.nodePath)"])
        case .reconnect:
            sendHello()
        case .heartbeat:
            break
        default:
            logger.warning("unexpected \(envelope.kind) from the parent dropped")
        }
    }

    private func handleStart(_ envelope: Envelope) {
        let childID = envelope.correlationID
        guard envelope.payloads.count == 2,
            let start = try? envelope.payloads[0].withUnsafeBytes({ try codec.decode(StartPayload.self, from: $0, userInfo: [:]) })
        else {
            replyUpstreamError(.malformedMessage, "START needs a start payload and props", envelope)
            return
        }
        guard let factory = configuration.registry.factory(for: start.typeName) else {
            shared.count { $0.errors += 1 }
            logger.error("START for an unknown workflow type", metadata: ["path": "\(envelope.nodePath)", "type": "\(start.typeName)"])
            replyUpstreamError(.unknownType, "unknown workflow type \(start.typeName)", envelope, typeName: start.typeName)
            return
        }
        guard hosted.count < configuration.capacity else {
            replyUpstreamError(.refused, "worker \(configuration.name) is at capacity (\(configuration.capacity))", envelope)
            return
        }
        if let existing = hosted.removeValue(forKey: childID) { existing.stop() }
        do {
            let child = try envelope.payloads[1].withUnsafeBytes { bytes in
                try factory.start(childID: childID, path: envelope.nodePath, props: bytes, propsSequence: envelope.sequence, snapshot: start.snapshot, engine: self)
            }
            hosted[childID] = child
            shared.count { $0.started += 1 }
            logger.debug("started", metadata: ["path": "\(envelope.nodePath)", "type": "\(start.typeName)"])
        } catch {
            shared.count { $0.errors += 1 }
            logger.error("START failed: \(error)", metadata: ["path": "\(envelope.nodePath)"])
            replyUpstreamError(.undecodableProps, "\(error)", envelope, typeName: start.typeName)
        }
    }

    private func replyUpstreamError(_ code: ErrorPayload.Code, _ message: String, _ envelope: Envelope, typeName: String? = nil) {
        guard let payload = try? codec.encode(ErrorPayload(code: code, message: message, typeName: typeName)) else { return }
        sendUpstream(kind: .error, correlationID: envelope.correlationID, nodePath: envelope.nodePath, payloads: [payload])
    }

    /// How a hosted child's renderings and outputs leave: queued here, flushed once per loop
    /// iteration (outputs first, then the latest rendering), so a burst costs one message.
    func forwarder(childID: UInt64, path: String, exporter: SinkTable) -> HostedChildForwarder {
        HostedChildForwarder(childID: childID, path: path, exporter: exporter, bound: LoopBound(self, owner: jobs))
    }

    private func markDirty(_ childID: UInt64) {
        if !flushOrder.contains(childID) { flushOrder.append(childID) }
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

    private func flushHosted() {
        guard !flushOrder.isEmpty else { return }
        let order = flushOrder
        flushOrder = []
        for childID in order {
            flushOutputsAndAcknowledgement(childID)
            if let rendering = pendingRenderings.removeValue(forKey: childID) {
                sendUpstream(kind: .rendering, correlationID: childID, sequence: rendering.sequence, nodePath: rendering.path, payloads: [rendering.bytes])
            }
        }
    }

    /// Sends a child's queued outputs and, in the same multipart message as the last of them,
    /// the cumulative acknowledgement of the events applied so far with a snapshot taken right
    /// after them: the parent never sees an acknowledgement without the matching state.
    private func flushOutputsAndAcknowledgement(_ childID: UInt64) {
        let outputs = pendingOutputs.removeValue(forKey: childID)
        let applied = appliedEvents[childID, default: 0]
        let acknowledge = applied > acknowledgedEvents[childID, default: 0]
        guard outputs != nil || acknowledge, let child = hosted[childID] else { return }
        let path = outputs?.path ?? child.path
        let frames = outputs?.frames ?? []
        let chunk = WireLimits.default.maxPayloadFrames - 1
        var start = 0
        repeat {
            let end = min(start + chunk, frames.count)
            let isLast = end == frames.count
            let snapshot = isLast && acknowledge ? child.snapshot() : nil
            let info = OutputsPayload(
                causes: Array(outputs?.causes[start..<end] ?? []), ordinals: Array(outputs?.ordinals[start..<end] ?? []), snapshot: snapshot)
            guard let header = try? codec.encode(info) else {
                logger.error("an outputs header does not encode", metadata: ["path": "\(path)"])
                return
            }
            sendUpstream(
                kind: .outputs, correlationID: childID, acknowledged: isLast && acknowledge ? applied : 0, nodePath: path,
                payloads: [header] + frames[start..<end])
            start = end
        } while start < frames.count
        if acknowledge { acknowledgedEvents[childID] = applied }
    }

    private func sendUpstream(
        kind: MessageKind, correlationID: UInt64, sequence: UInt64 = 0, acknowledged: UInt64 = 0, nodePath: String, payloads: [[UInt8]]
    ) {
        let envelope = Envelope(
            kind: kind, codec: codec.id, correlationID: correlationID, sequence: sequence, acknowledged: acknowledged, nodePath: nodePath,
            payloads: payloads)
        do {
            try sockets.sendUpstream(frames: envelope.encodeFrames())
            lastSentUpstream = .now
        } catch {
            logger.warning("cannot send \(kind) to the parent: \(error)", metadata: ["path": "\(nodePath)"])
        }
    }

    // MARK: Security

    private func serviceSecurity() {
        let (refused, failedHandshakes) = sockets.serviceSecurity()
        for key in refused {
            // A public key is not a secret; logging it tells an operator which worker to allow.
            logger.warning("refused a worker whose key is not allowed", metadata: ["publicKey": "\(key.z85)"])
        }
        if failedHandshakes > 0 {
            logger.warning("a peer failed the CURVE handshake (wrong server key?)", metadata: ["count": "\(failedHandshakes)"])
        }
        if !refused.isEmpty || failedHandshakes > 0 {
            shared.count { $0.refusedPeers += refused.count + failedHandshakes }
        }
    }

    // MARK: Heartbeats

    /// Heartbeats both ways: each side sends one on a link it has otherwise left idle for an
    /// interval, and any message counts as a sign of life. A worker silent for
    /// `interval × liveness` is dead to its parent; a parent silent that long makes the worker
    /// reconnect on a fresh socket and say HELLO again, backing off exponentially.
    private func runTimers() {
        let now = ContinuousClock.now
        let interval = configuration.heartbeatInterval
        let deadAfter = interval * configuration.heartbeatLiveness
        if sockets.hasUpstream, !shuttingDown {
            if now - lastSentUpstream >= interval {
                sendUpstream(kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            }
            let backoff = interval * (1 << min(reconnectAttempts, 5))
            if now - lastHeardUpstream > deadAfter + backoff {
                reconnectToParent(silentFor: now - lastHeardUpstream)
            }
        }
        for (id, peer) in workers {
            if now - peer.lastHeard > deadAfter {
                removeWorker(id, reason: "silent for \(deadAfter)")
            } else if now - peer.lastSent >= interval {
                sendToWorker(id, kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            }
        }
    }

    private func reconnectToParent(silentFor silence: Duration) {
        reconnectAttempts += 1
        logger.warning("the parent is silent; reconnecting", metadata: ["silent": "\(silence)", "attempt": "\(reconnectAttempts)"])
        shared.setWelcomed(false)
        // The parent will place its children again (restoring them from their snapshots); the
        // copies here would only diverge.
        for (_, child) in hosted { child.stop() }
        hosted.removeAll()
        pendingRenderings.removeAll()
        pendingOutputs.removeAll()
        appliedEvents.removeAll()
        acknowledgedEvents.removeAll()
        flushOrder.removeAll()
        do {
            try sockets.reconnectUpstream()
        } catch {
            logger.error("cannot reconnect to the parent: \(error)")
        }
        lastHeardUpstream = .now
        sendHello()
    }
}

/// FNV-1a over the UTF-8 bytes: the same in every process and run (unlike `hashValue`).
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}

/// A hosted child's outputs waiting for the next flush, each with the event that caused it.
struct PendingOutputs {
    let path: String
    var frames: [[UInt8]] = []
    var causes: [UInt64] = []
    var ordinals: [UInt32] = []

    init(path: String) {
        self.path = path
    }

    mutating func append(_ bytes: [UInt8], cause: UInt64, ordinal: UInt32) {
        frames.append(bytes)
        causes.append(cause)
        ordinals.append(ordinal)
    }
}

/// A worker as its parent knows it.
final class WorkerPeer {
    let id: WorkerID
    let name: String
    let pool: String
    let hostedTypes: Set<String>
    let capacity: Int
    var children: Set<UInt64> = []
    var lastHeard = ContinuousClock.now
    var lastSent = ContinuousClock.now

    init(id: WorkerID, name: String, pool: String, hostedTypes: Set<String>, capacity: Int) {
        self.id = id
        self.name = name
        self.pool = pool
        self.hostedTypes = hostedTypes
        self.capacity = capacity
    }
}

/// A worker's ZeroMQ routing id, as the parent's ROUTER socket reports it.
struct WorkerID: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]
    var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// Encodes a hosted child's renderings and outputs and queues them on the engine. Called by the
/// child's host on the loop thread.
struct HostedChildForwarder: Sendable {
    let childID: UInt64
    let path: String
    let exporter: SinkTable
    let bound: LoopBound<RemoteEngine>

    /// Encodes at once, not at flush: encoding is what registers the rendering's sinks in the
    /// child's sink table, and events for them may arrive before the flush (a replay after a
    /// failover arrives right behind START).
    func rendering<R: Encodable>(_ rendering: R, propsSequence: UInt64) {
        let engine = bound.value
        do {
            let bytes = try engine.codec.encode(rendering, userInfo: [.workflowSinkExporter: exporter])
            engine.enqueue(rendering: bytes, sequence: propsSequence, childID: childID, path: path)
        } catch {
            engine.log(error: "a rendering does not encode and was not sent: \(error)")
        }
    }

    func output<O: Encodable>(_ output: O) {
        let engine = bound.value
        do {
            let bytes = try engine.codec.encode(output, userInfo: [.workflowSinkExporter: exporter])
            engine.enqueue(output: bytes, childID: childID, path: path)
        } catch {
            engine.log(error: "an output does not encode and was dropped: \(error)")
        }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
