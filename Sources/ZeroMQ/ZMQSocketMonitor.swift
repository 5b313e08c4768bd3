import CZeroMQ
import Foundation

/// Observes a socket's connection lifecycle via `zmq_socket_monitor`.
///
/// The runtime needs to know when a child process connects, finishes its (CURVE)
/// handshake or goes away; libzmq reports this only through a monitor stream. The monitor
/// publishes on a private `inproc://` endpoint; this type connects a PAIR socket to it and
/// decodes each two-frame event into an ``Event``.
///
/// Threading: like every socket, a monitor belongs to one thread. It must be created on
/// the thread that owns the monitored socket (libzmq configures the monitor through that
/// socket). Events for unread monitors queue up inside libzmq, so drain them (e.g. by
/// registering the monitor with the loop's ``ZMQPoller``) or ``stop()`` the monitor.
public final class ZMQSocketMonitor {
    /// One lifecycle event of the monitored socket.
    public struct Event: Sendable, Hashable {
        /// What happened.
        public let kind: Kind
        /// The endpoint concerned, e.g. `tcp://127.0.0.1:5555`.
        public let endpoint: String
        /// The event's numeric detail: a file descriptor, reconnect interval, or `errno`
        /// / protocol-error code, depending on `kind` (see `zmq_socket_monitor(3)`).
        public let value: UInt32

        /// An event as a monitor reports it; also what a transport that is not a socket (a
        /// test's simulated one) reports of its simulated connections.
        public init(kind: Kind, endpoint: String, value: UInt32 = 0) {
            self.kind = kind
            self.endpoint = endpoint
            self.value = value
        }
    }

    /// The kinds of events libzmq reports (`ZMQ_EVENT_*`).
    public enum Kind: Sendable, Hashable {
        /// A connect completed at the TCP/IPC level (handshake still pending).
        case connected
        /// A connect is in progress asynchronously.
        case connectDelayed
        /// A reconnect attempt was scheduled; `value` is the interval in ms.
        case connectRetried
        /// A bind succeeded and the socket is listening.
        case listening
        /// A bind failed; `value` is the `errno`.
        case bindFailed
        /// A listening socket accepted an incoming connection.
        case accepted
        /// Accepting a connection failed; `value` is the `errno`.
        case acceptFailed
        /// A connection's underlying descriptor was closed.
        case closed
        /// Closing a descriptor failed.
        case closeFailed
        /// A session ended unexpectedly (peer gone, heartbeat timeout, failed handshake).
        case disconnected
        /// Monitoring stopped (the monitored socket closed or the monitor was stopped).
        case monitorStopped
        /// The ZMTP/security handshake failed without further detail.
        case handshakeFailedNoDetail
        /// The ZMTP/security handshake succeeded: the peer is ready to talk.
        case handshakeSucceeded
        /// The handshake failed because of a protocol error (e.g. a CURVE client using the
        /// wrong server key); `value` is a `ZMQ_PROTOCOL_ERROR_*` code.
        case handshakeFailedProtocol
        /// The handshake was rejected by ZAP authentication; `value` is the status code.
        case handshakeFailedAuthentication
        /// An event code this binding does not know (newer libzmq).
        case other(UInt16)

        /// Every kind this binding can decode; the default subscription.
        public static let allKnown: [Kind] = [
            .connected, .connectDelayed, .connectRetried, .listening, .bindFailed,
            .accepted, .acceptFailed, .closed, .closeFailed, .disconnected, .monitorStopped,
            .handshakeFailedNoDetail, .handshakeSucceeded, .handshakeFailedProtocol,
            .handshakeFailedAuthentication,
        ]

        /// Whether this is one of the three handshake-failure kinds.
        public var isHandshakeFailure: Bool {
            switch self {
            case .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuthentication: true
            default: false
            }
        }

        /// The `ZMQ_EVENT_*` bit.
        var code: UInt16 {
            switch self {
            case .connected: UInt16(ZMQ_EVENT_CONNECTED)
            case .connectDelayed: UInt16(ZMQ_EVENT_CONNECT_DELAYED)
            case .connectRetried: UInt16(ZMQ_EVENT_CONNECT_RETRIED)
            case .listening: UInt16(ZMQ_EVENT_LISTENING)
            case .bindFailed: UInt16(ZMQ_EVENT_BIND_FAILED)
            case .accepted: UInt16(ZMQ_EVENT_ACCEPTED)
            case .acceptFailed: UInt16(ZMQ_EVENT_ACCEPT_FAILED)
            case .closed: UInt16(ZMQ_EVENT_CLOSED)
            case .closeFailed: UInt16(ZMQ_EVENT_CLOSE_FAILED)
            case .disconnected: UInt16(ZMQ_EVENT_DISCONNECTED)
            case .monitorStopped: UInt16(ZMQ_EVENT_MONITOR_STOPPED)
            case .handshakeFailedNoDetail: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
            case .handshakeSucceeded: UInt16(ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            case .handshakeFailedProtocol: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
            case .handshakeFailedAuthentication: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            case .other(let code): code
            }
        }

        /// Decodes a `ZMQ_EVENT_*` code.
        init(code: UInt16) {
            self = Self.allKnown.first { $0.code == code } ?? .other(code)
        }
    }

    /// The PAIR socket receiving the event stream.
    let socket: ZMQSocket
    /// The socket being observed; kept so ``stop()`` can detach the monitor.
    private let monitored: ZMQSocket
    private var isStopped = false

    /// Starts monitoring `socket` for the given kinds of events (all known kinds by
    /// default). Must run on the thread that owns `socket`.
    public init(monitoring socket: ZMQSocket, events: [Kind] = Kind.allKnown) throws(ZMQError) {
        let handle = try socket.requireHandle()
        let endpoint = "inproc://swift-zeromq.monitor.\(UUID().uuidString)"
        let mask = events.reduce(Int32(0)) { $0 | Int32($1.code) }
        guard zmq_socket_monitor(handle, endpoint, mask) == 0 else { throw ZMQError.last() }
        let pair: ZMQSocket
        do {
            pair = try ZMQSocket(.pair, context: socket.context)
            try pair.set(.linger, 0)
            try pair.connect(endpoint)
        } catch {
            _ = zmq_socket_monitor(handle, nil, 0)
            throw error
        }
        self.socket = pair
        self.monitored = socket
    }

    deinit {
        stop()
    }

    /// Detaches the monitor from the observed socket and closes the event stream.
    /// Idempotent; also runs on `deinit`.
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        if let handle = monitored.handle {
            _ = zmq_socket_monitor(handle, nil, 0)
        }
        socket.close()
    }

    /// Returns the next event, or nil if none arrived within `mode`'s limits.
    public func nextEvent(_ mode: ZMQSocket.ReceiveMode = .blocking) throws(ZMQError) -> Event? {
        guard let frames = try socket.receiveMessages(mode) else { return nil }
        guard frames.count == 2, frames[0].count >= 6 else { throw ZMQError(code: EPROTO) }
        let (code, value) = frames[0].withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt16.self),
             raw.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
        }
        let endpoint = frames[1].withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return Event(kind: Kind(code: code), endpoint: endpoint, value: value)
    }

    /// Waits up to `timeout` for an event of `kind`, discarding other events on the way.
    /// Returns nil if none came in time. Useful in tests and start-up code that must
    /// await e.g. `handshakeSucceeded` instead of sleeping.
    public func waitFor(_ kind: Kind, timeout: Duration) throws(ZMQError) -> Event? {
        try waitFor(timeout: timeout) { $0.kind == kind }
    }

    /// Waits up to `timeout` for an event matching `predicate`, discarding others.
    public func waitFor(timeout: Duration, where predicate: (Event) -> Bool) throws(ZMQError) -> Event? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            guard let event = try nextEvent(.timeout(remaining)) else { return nil }
            if predicate(event) { return event }
        }
    }
}
