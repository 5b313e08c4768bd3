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
    private var upstreamToken: ZMQPoller.Token?
    /// The listener's endpoint as bound (with the port a `tcp://…:*` bind chose).
    let listenEndpoint: String?

    init(configuration: RemoteRuntimeConfiguration) throws {
        self.configuration = configuration
        do {
            context = try ZMQContext()
            wakeup = try ZMQWakeup()
            poller = ZMQPoller()
            if let endpoint = configuration.listenEndpoint {
                let socket = try ZMQSocket(.router, context: context)
                try socket.set(.linger, 0)
                try socket.set(.routerMandatory, true)
                try socket.set(.routerHandover, true)
                try socket.set(.maxMessageSize, Int64(configuration.maxMessageSize))
                try socket.set(.sendHighWaterMark, 100_000)
                try socket.set(.receiveHighWaterMark, 100_000)
                do {
                    try socket.bind(endpoint)
                } catch {
                    throw RemoteRuntimeError.endpoint(endpoint, reason: "\(error)")
                }
                listener = socket
                listenEndpoint = try socket.lastEndpoint
            } else {
                listener = nil
                listenEndpoint = nil
            }
            if let endpoint = configuration.parentEndpoint {
                upstream = try Self.makeUpstream(context: context, endpoint: endpoint, configuration: configuration)
            } else {
                upstream = nil
            }
            poller.add(wakeup)
            listenerToken = listener.map { poller.add($0) }
            upstreamToken = upstream.map { poller.add($0) }
        } catch let error as RemoteRuntimeError {
            throw error
        } catch {
            throw RemoteRuntimeError.endpoint(configuration.listenEndpoint ?? configuration.parentEndpoint ?? "-", reason: "\(error)")
        }
    }

    var hasUpstream: Bool { upstream != nil }

    /// A DEALER connected to the parent, with a fresh routing id (so the parent sees a new peer).
    private static func makeUpstream(context: ZMQContext, endpoint: String, configuration: RemoteRuntimeConfiguration) throws -> ZMQSocket {
        let socket = try ZMQSocket(.dealer, context: context)
        try socket.set(.linger, 200)
        try socket.set(.maxMessageSize, Int64(configuration.maxMessageSize))
        try socket.set(.sendHighWaterMark, 100_000)
        try socket.set(.receiveHighWaterMark, 100_000)
        try socket.set(.routingID, Array("\(configuration.name)#\(UUID().uuidString.prefix(8))".utf8))
        do {
            try socket.connect(endpoint)
        } catch {
            throw RemoteRuntimeError.endpoint(endpoint, reason: "\(error)")
        }
        return socket
    }

    /// Replaces the connection to the parent with a fresh socket (the Paranoid Pirate way: a
    /// socket whose peer went silent may hold stale state, a new one starts clean).
    func reconnectUpstream() throws {
        guard let endpoint = configuration.parentEndpoint, let old = upstream else { return }
        if let upstreamToken { poller.remove(upstreamToken) }
        try? old.set(.linger, 0)
        old.close()
        let socket = try Self.makeUpstream(context: context, endpoint: endpoint, configuration: configuration)
        upstream = socket
        upstreamToken = poller.add(socket)
    }

    /// Waits until a socket is readable, the wakeup fires, or `timeout` passes. With
    /// `listenerOnly`, only the workers' socket counts: used while a render pass settles, when
    /// requests from this process's own parent must wait (they may touch the host that is
    /// settling).
    func poll(timeout: Duration, listenerOnly: Bool = false) -> (listener: Bool, upstream: Bool) {
        if listenerOnly, let upstreamToken { poller.setEvents([], for: upstreamToken) }
        defer { if listenerOnly, let upstreamToken { poller.setEvents(.readable, for: upstreamToken) } }
        let ready = (try? poller.poll(timeout: timeout)) ?? [:]
        return (
            listenerToken.map { ready[$0] != nil } ?? false,
            upstreamToken.map { ready[$0] != nil } ?? false
        )
    }

    /// The next message from a worker, without waiting: its routing id and frames.
    func receiveFromListener() -> (WorkerID, [[UInt8]])? {
        guard let listener, let frames = try? listener.receiveMultipart(.dontWait), frames.count >= 1 else { return nil }
        return (WorkerID(bytes: frames[0]), Array(frames.dropFirst()))
    }

    /// The next message from the parent, without waiting.
    func receiveFromUpstream() -> [[UInt8]]? {
        guard let upstream else { return nil }
        return try? upstream.receiveMultipart(.dontWait)
    }

    func sendToListenerPeer(_ peer: WorkerID, frames: [[UInt8]]) throws(ZMQError) {
        guard let listener else { return }
        try listener.send([peer.bytes] + frames, mode: .dontWait)
    }

    func sendUpstream(frames: [[UInt8]]) throws(ZMQError) {
        guard let upstream else { return }
        try upstream.send(frames, mode: .dontWait)
    }

    func close() {
        listener?.close()
        upstream?.close()
        context.shutdown()
    }
}
