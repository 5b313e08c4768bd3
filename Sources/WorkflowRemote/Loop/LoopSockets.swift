import Foundation
import ZeroMQ

/// The ZeroMQ sockets of one remote runtime: a ROUTER workers connect to (parent role), a DEALER
/// connected to the parent (worker role), and the wakeup other threads use to interrupt a poll.
///
/// Created on the thread that starts the runtime (so bind errors surface there), then used only
/// by the loop thread: libzmq allows moving a socket to another thread across a full memory
/// barrier, which starting the thread provides.
final class LoopSockets {
    let context: ZMQContext
    let wakeup: ZMQWakeup
    private let listener: ZMQSocket?
    private var upstream: ZMQSocket?
    private let configuration: RemoteRuntimeConfiguration
    private let poller: ZMQPoller
    private var listenerToken: ZMQPoller.Token?
    /// The ZAP handler socket, when the listener uses CURVE.
    private let zap: ZMQSocket?
    private var zapToken: ZMQPoller.Token?
    /// Reports handshake failures on the listener (a worker with a wrong server key).
    private let listenerMonitor: ZMQSocketMonitor?
    private var monitorToken: ZMQPoller.Token?
    private var upstreamToken: ZMQPoller.Token?
    /// Reports the connection to the parent: its handshake succeeding or failing (a key the
    /// parent refuses, a wrong server key), and connection attempts that did not get through.
    /// libzmq tells a client about its failed handshake only this way.
    private var upstreamMonitor: ZMQSocketMonitor?
    private var upstreamMonitorToken: ZMQPoller.Token?
    /// The worker whose message the listener received last: its id is reused for its next
    /// message instead of being copied out of the routing frame again.
    private var lastPeer: WorkerID?
    /// The listener's endpoint as bound (with the port a `tcp://…:*` bind chose).
    let listenEndpoint: String?

    /// Messages queued for one peer before a send fails with EAGAIN (and the message is
    /// dropped, never queued in this process). Must stay above
    /// `RemoteRuntimeConfiguration.maxOutstandingEvents`, so a parent's sinks refuse events
    /// before its queue to a worker can fill.
    static let sendHighWaterMark: Int32 = 100_000
    /// Messages from one peer waiting for the loop in the listener's receive queue. libzmq drops
    /// nothing inbound: at this mark it stops reading that connection, so the rest waits in the
    /// sender's own queue and the kernel's socket buffer (TCP/ipc push-back). It is what bounds
    /// the memory a peer flooding the listener can make this process hold: at most this many of
    /// its messages, each at most `maxMessageSize`. libzmq's own default; a worker's messages
    /// beyond it wait in that worker's send queue instead, which is as large as before.
    static let listenerReceiveHighWaterMark: Int32 = 1_000
    /// Messages from the parent waiting for the loop: the parent is trusted (the worker chose to
    /// connect to it), and a burst of its events is taken in without pushing back.
    static let upstreamReceiveHighWaterMark: Int32 = 100_000

    init(configuration: RemoteRuntimeConfiguration) throws {
        self.configuration = configuration
        do {
            context = try ZMQContext()
            wakeup = try ZMQWakeup()
            poller = ZMQPoller()
            for endpoint in [configuration.listenEndpoint, configuration.parentEndpoint].compactMap({ $0 }) + configuration.alternateParentEndpoints {
                let isPlaintext = endpoint == configuration.listenEndpoint
                    ? configuration.listenSecurity == .plaintext : configuration.parentSecurity == .plaintext
                if isPlaintext && !configuration.allowPlaintextOnNetwork && !RemoteRuntimeConfiguration.isLocalOnly(endpoint) {
                    throw RemoteRuntimeError.insecureEndpoint(endpoint)
                }
            }
            if case .curve = configuration.listenSecurity, configuration.listenEndpoint != nil {
                // libzmq asks the ZAP handler at this well-known inproc address about every
                // connecting peer; it must exist before the listener binds.
                let handler = try ZMQSocket(.router, context: context)
                try handler.set(.linger, 0)
                try handler.bind("inproc://zeromq.zap.01")
                zap = handler
            } else {
                zap = nil
            }
            if let endpoint = configuration.listenEndpoint {
                let socket = try ZMQSocket(.router, context: context)
                if case .curve(let keyPair, _) = configuration.listenSecurity {
                    try socket.set(.curveServer, true)
                    try socket.set(.curveSecretKey, keyPair.secretKey)
                    try socket.set(.zapDomain, "workflow")
                }
                try socket.set(.linger, 0)
                try socket.set(.routerMandatory, true)
                try socket.set(.routerHandover, true)
                try socket.set(.maxMessageSize, Int64(configuration.maxMessageSize))
                try socket.set(.sendHighWaterMark, Self.sendHighWaterMark)
                try socket.set(.receiveHighWaterMark, Self.listenerReceiveHighWaterMark)
                do {
                    try socket.bind(endpoint)
                } catch {
                    throw RemoteRuntimeError.failed(endpoint, binding: true, error)
                }
                listener = socket
                listenEndpoint = try socket.lastEndpoint
                listenerMonitor = try ZMQSocketMonitor(monitoring: socket, events: [.handshakeFailedAuthentication, .handshakeFailedProtocol, .handshakeFailedNoDetail])
            } else {
                listener = nil
                listenEndpoint = nil
                listenerMonitor = nil
            }
            if let endpoint = configuration.parentEndpoint {
                (upstream, upstreamMonitor) = try Self.makeUpstream(context: context, endpoint: endpoint, configuration: configuration)
            } else {
                upstream = nil
            }
            poller.add(wakeup)
            listenerToken = listener.map { poller.add($0) }
            zapToken = zap.map { poller.add($0) }
            monitorToken = listenerMonitor.map { poller.add($0) }
            upstreamToken = upstream.map { poller.add($0) }
            upstreamMonitorToken = upstreamMonitor.map { poller.add($0) }
        } catch let error as RemoteRuntimeError {
            throw error
        } catch {
            throw RemoteRuntimeError.failed(configuration.listenEndpoint ?? configuration.parentEndpoint ?? "-", binding: false, error)
        }
    }

    var hasUpstream: Bool { upstream != nil }

    /// Every endpoint of the parent, the one connected to first (`parentEndpoint`, then its
    /// alternates).
    private var parentEndpoints: [String] {
        configuration.parentEndpoint.map { [$0] + configuration.alternateParentEndpoints } ?? []
    }
    /// Which of `parentEndpoints` the upstream socket is connected to.
    private var parentIndex = 0
    /// The parent's endpoint the upstream socket is connected to.
    var currentParentEndpoint: String? { parentEndpoints.isEmpty ? nil : parentEndpoints[parentIndex] }
    /// Whether the parent has more than one endpoint (a leader and its standbys).
    var hasAlternateParents: Bool { parentEndpoints.count > 1 }
    /// How many endpoints the parent has (at least one for a worker).
    var parentEndpointCount: Int { max(parentEndpoints.count, 1) }

    /// A DEALER connected to the parent, with a fresh routing id (so the parent sees a new peer),
    /// and the monitor of its connection. The monitor is attached before the connect: libzmq
    /// reports an event only to a monitor attached when it happens, and a worker that missed its
    /// handshake would hold its HELLO forever (it says HELLO once the handshake has succeeded).
    private static func makeUpstream(
        context: ZMQContext, endpoint: String, configuration: RemoteRuntimeConfiguration
    ) throws -> (socket: ZMQSocket, monitor: ZMQSocketMonitor) {
        let socket = try ZMQSocket(.dealer, context: context)
        // A worker that leaves in order sends its last messages (a drain's final flushes, GOODBYE)
        // just before it closes: they get up to a second to leave, as the listener's STOPs do
        // (`close()`); a reconnect closes the old socket with linger 0.
        try socket.set(.linger, 1_000)
        try socket.set(.maxMessageSize, Int64(configuration.maxMessageSize))
        try socket.set(.sendHighWaterMark, Self.sendHighWaterMark)
        try socket.set(.receiveHighWaterMark, Self.upstreamReceiveHighWaterMark)
        try socket.set(.routingID, Array("\(configuration.name)#\(UUID().uuidString.prefix(8))".utf8))
        // The worker waits for a connection however long it takes (the silence rule starts with
        // the handshake), so libzmq must keep trying promptly: a TCP connect that gets no answer
        // for a heartbeat window is started afresh (the kernel alone would back off to minutes
        // across a partition), and a handshake stalled for four windows (at least 2 s; several
        // round trips on a lossy link) is dropped and retried.
        let window = configuration.heartbeatInterval * configuration.heartbeatLiveness
        try socket.set(.connectTimeout, Int32(clamping: max(window.milliseconds, 100)))
        try socket.set(.handshakeInterval, Int32(clamping: max((window * 4).milliseconds, 2_000)))
        if case .curve(let keyPair, let serverKey) = configuration.parentSecurity {
            try socket.set(.curveServerKey, serverKey)
            try socket.set(.curvePublicKey, keyPair.publicKey)
            try socket.set(.curveSecretKey, keyPair.secretKey)
        }
        let monitor = try monitorUpstream(socket)
        do {
            try socket.connect(endpoint)
        } catch {
            throw RemoteRuntimeError.failed(endpoint, binding: false, error)
        }
        return (socket, monitor)
    }

    /// The monitor of a connection to the parent: the events the worker role acts on.
    private static func monitorUpstream(_ socket: ZMQSocket) throws -> ZMQSocketMonitor {
        try ZMQSocketMonitor(
            monitoring: socket,
            events: [
                .handshakeSucceeded, .handshakeFailedAuthentication, .handshakeFailedProtocol, .handshakeFailedNoDetail, .connectRetried,
                .disconnected,
            ])
    }

    /// Replaces the connection to the parent with a fresh socket (the Paranoid Pirate way: a
    /// socket whose peer went silent may hold stale state, a new one starts clean).
    ///
    /// `movingOn`: to the parent's next endpoint (the one in use is silent or unreachable: it
    /// may be a standby, or a leader that stopped leading), else to the same one.
    func reconnectUpstream(movingOn: Bool = false) throws {
        guard !parentEndpoints.isEmpty, let old = upstream else { return }
        if movingOn { parentIndex = (parentIndex + 1) % parentEndpoints.count }
        let endpoint = parentEndpoints[parentIndex]
        if let upstreamToken { poller.remove(upstreamToken) }
        if let upstreamMonitorToken { poller.remove(upstreamMonitorToken) }
        upstreamMonitor?.stop()
        upstreamMonitor = nil
        upstreamMonitorToken = nil
        try? old.set(.linger, 0)
        old.close()
        let (socket, monitor) = try Self.makeUpstream(context: context, endpoint: endpoint, configuration: configuration)
        upstream = socket
        upstreamToken = poller.add(socket)
        upstreamMonitor = monitor
        upstreamMonitorToken = poller.add(monitor)
    }

    /// What the monitor saw happen to the connection to the parent since the last call.
    func upstreamConnectionEvents() -> [ZMQSocketMonitor.Event] {
        guard let upstreamMonitor else { return [] }
        var events: [ZMQSocketMonitor.Event] = []
        while let event = try? upstreamMonitor.nextEvent(.dontWait) { events.append(event) }
        return events
    }

    /// Waits until a socket is readable, the wakeup fires, or `timeout` passes. With
    /// `listenerOnly`, only the workers' socket counts: used while a render pass settles, when
    /// requests from this process's own parent must wait (they may touch the host that is
    /// settling).
    func poll(timeout: Duration, listenerOnly: Bool = false) -> (listener: Bool, upstream: Bool, security: Bool) {
        if listenerOnly, let upstreamToken { poller.setEvents([], for: upstreamToken) }
        defer { if listenerOnly, let upstreamToken { poller.setEvents(.readable, for: upstreamToken) } }
        guard let count = try? poller.wait(timeout: timeout), count > 0 else { return (false, false, false) }
        func isReady(_ token: ZMQPoller.Token?) -> Bool { token.map { !poller.readyEvents(for: $0).isEmpty } ?? false }
        return (
            isReady(listenerToken), isReady(upstreamToken),
            isReady(zapToken) || isReady(monitorToken) || isReady(upstreamMonitorToken)
        )
    }

    /// Answers pending ZAP requests: admits a CURVE peer whose public key is allowed. Returns
    /// the keys refused, and counts the listener's failed handshakes.
    func serviceSecurity() -> (refused: [CurveKey], failedHandshakes: Int) {
        var refused: [CurveKey] = []
        var failed = 0
        if let zap, case .curve(_, let allowed) = configuration.listenSecurity {
            // Request: [peer, "", version, request id, domain, address, identity, mechanism, key…]
            while let frames = try? zap.receiveMultipart(.dontWait), frames.count >= 8 {
                let mechanism = String(decoding: frames[7], as: UTF8.self)
                let key = frames.count > 8 ? try? CurveKey(bytes: frames[8]) : nil
                let admitted = mechanism == "CURVE" && key.map { allowed.contains($0) } == true
                if !admitted, let key { refused.append(key) }
                let status = admitted ? "200" : "400"
                let reply: [[UInt8]] = [
                    frames[0], [], Array("1.0".utf8), frames[3], Array(status.utf8),
                    Array((admitted ? "OK" : "key not allowed").utf8), admitted ? Array("worker".utf8) : [], [],
                ]
                try? zap.send(reply, mode: .dontWait)
            }
        }
        if let listenerMonitor {
            while let event = try? listenerMonitor.nextEvent(.dontWait) {
                // A key the ZAP handler refused fails the handshake too (`handshakeFailedAuthentication`),
                // and is already in `refused`: counted once.
                if event.kind == .handshakeFailedProtocol || event.kind == .handshakeFailedNoDetail { failed += 1 }
            }
        }
        return (refused, failed)
    }

    /// The next message from a worker, without waiting: its routing id, with its frames in
    /// `received` (frame 0 is the routing id, the message's own frames follow). `nil` when
    /// nothing is waiting.
    ///
    /// Only the first `maxFrames` frames are copied out of libzmq; any further ones are held
    /// empty. Such a message is invalid by its frame count alone (which the envelope check
    /// still sees), and a peer's endless multipart message is then not held a second time here.
    func receiveFromListener(into received: inout ZMQFrameBuffer, copyingAtMost maxFrames: Int) -> WorkerID? {
        guard let listener, (try? listener.receiveMultipart(into: &received, .dontWait, copyingAtMost: maxFrames + 1)) == true,
            !received.isEmpty
        else { return nil }
        // The same peer as last time (the usual case): its id is not copied again.
        let lastPeer = self.lastPeer
        if let lastPeer, received.withFrames({ lastPeer.bytes.elementsEqual($0[0]) }) { return lastPeer }
        let peer = WorkerID(bytes: received.frame(0))
        self.lastPeer = peer
        return peer
    }

    /// The next message from the parent, without waiting, into `received`; `false` when nothing
    /// is waiting.
    func receiveFromUpstream(into received: inout ZMQFrameBuffer) -> Bool {
        guard let upstream else { return false }
        return (try? upstream.receiveMultipart(into: &received, .dontWait)) == true
    }

    func sendToListenerPeer(_ peer: WorkerID, message: OutgoingMessage) throws(ZMQError) {
        guard let listener, !listener.isClosed else { return }
        let routed: Result<Void, ZMQError> = peer.bytes.withUnsafeBytes { routingID in
            Result { () throws(ZMQError) in try listener.sendFrame(routingID, more: true, mode: .dontWait) }
        }
        try routed.get()
        try send(message, on: listener)
    }

    func sendUpstream(_ message: OutgoingMessage) throws(ZMQError) {
        guard let upstream, !upstream.isClosed else { return }
        try send(message, on: upstream)
    }

    /// Sends `message` frame by frame. Once its first frame went, libzmq has taken the message
    /// (a full queue or an unknown peer fails the first frame), so the rest follow.
    private func send(_ message: OutgoingMessage, on socket: ZMQSocket) throws(ZMQError) {
        var failure: ZMQError?
        message.forEachFrame { frame, more in
            do throws(ZMQError) {
                try socket.sendFrame(frame, more: more, mode: .dontWait)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    func close() {
        listenerMonitor?.stop()
        upstreamMonitor?.stop()
        zap?.close()
        // The listener runs with linger 0 so a dead worker's queue never holds the loop; on a
        // planned stop its last messages (STOPs) get up to a second to leave (a loaded machine may
        // not run the I/O thread sooner; a peer gone or stopped costs that second at most).
        try? listener?.set(.linger, 1_000)
        listener?.close()
        upstream?.close()
        context.shutdown()
    }
}
