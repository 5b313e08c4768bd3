import ZeroMQ

/// What the loop and its role drivers need of the network: the workers' listener (parent role),
/// the connection to the parent (worker role) and its events, and a wait for either.
///
/// `LoopSockets` is the one in production (ZeroMQ); the simulator gives the same drivers a
/// transport of its own (`SimulatedTransport` in the tests) whose delays, losses and partitions
/// a seed decides, so one process's runtime runs step by step, on one thread, in virtual time.
/// Each call is made on the loop thread only.
protocol LoopTransport: AnyObject {
    /// Whether this process has a parent (it connects upstream as a worker).
    var hasUpstream: Bool { get }
    /// How many endpoints the parent has (at least one for a worker).
    var parentEndpointCount: Int { get }
    /// Whether the parent has more than one endpoint (a leader and its standbys).
    var hasAlternateParents: Bool { get }
    /// The parent's endpoint the upstream connection uses.
    var currentParentEndpoint: String? { get }

    /// Replaces the connection to the parent with a fresh one (a new routing id, so the parent
    /// sees a new peer); `movingOn`: to the parent's next endpoint.
    func reconnectUpstream(movingOn: Bool) throws
    /// What happened to the connection to the parent since the last call (handshakes,
    /// disconnects, failed attempts), in order.
    func upstreamConnectionEvents() -> [ZMQSocketMonitor.Event]
    /// Waits until the listener or the upstream connection holds a message, the security side
    /// has work, a job wakes the loop, or `timeout` passes. `listenerOnly`: only the workers'
    /// messages count (a render pass settling).
    func poll(timeout: Duration, listenerOnly: Bool) -> (listener: Bool, upstream: Bool, security: Bool)
    /// Answers pending admissions of CURVE peers: the keys refused, and the listener's failed
    /// handshakes since the last call.
    func serviceSecurity() -> (refused: [CurveKey], failedHandshakes: Int)
    /// The next message from a worker, without waiting: its sender, its frames in `received`
    /// (frame 0 the routing id, then the message's own frames, at most `maxFrames` of them
    /// copied). `nil` when nothing is waiting.
    func receiveFromListener(into received: inout ZMQFrameBuffer, copyingAtMost maxFrames: Int) -> WorkerID?
    /// The next message from the parent, without waiting, into `received`; `false` when none.
    func receiveFromUpstream(into received: inout ZMQFrameBuffer) -> Bool
    /// Sends `message` to the worker `peer`; fails with `EHOSTUNREACH` when it is not connected
    /// and with `EAGAIN` when its queue is full.
    func sendToListenerPeer(_ peer: WorkerID, message: OutgoingMessage) throws(ZMQError)
    /// Sends `message` to the parent (queued while the connection is down).
    func sendUpstream(_ message: OutgoingMessage) throws(ZMQError)
    /// Closes everything (the loop ended).
    func close()
}

extension LoopTransport {
    /// Waits for any socket (`poll(timeout:listenerOnly:)` with every socket counted).
    func poll(timeout: Duration) -> (listener: Bool, upstream: Bool, security: Bool) {
        poll(timeout: timeout, listenerOnly: false)
    }
}

extension LoopSockets: LoopTransport {}
