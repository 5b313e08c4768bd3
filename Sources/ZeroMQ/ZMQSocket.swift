import CZeroMQ
import Foundation

/// A libzmq socket, owning its handle and closing it exactly once.
///
/// ## One owner thread
/// libzmq sockets are **not** thread-safe. A `ZMQSocket` must be used by one thread at a
/// time, and in practice by a single owner thread for its whole life. The type is
/// deliberately *not* `Sendable`, so strict concurrency rejects capturing it in a
/// `@Sendable` closure or sharing it between tasks. Code that needs sockets on a dedicated
/// I/O thread should create them on that thread (for example inside the `Thread` closure
/// of an event loop), poll them with ``ZMQPoller``, and let other threads reach that loop
/// through a ``ZMQWakeup`` plus a lock-protected work queue. A freshly created socket that
/// nothing else references may still be handed over once, via Swift's region-based
/// `sending` transfer (e.g. into a `Task.detached` operation); the compiler rejects any
/// later use from the original thread.
///
/// ## Lifetime
/// ``close()`` is idempotent and `deinit` closes too. After closing, every operation
/// throws ``ZMQError/isClosedSocket``. The socket holds a strong reference to its
/// ``ZMQContext`` so the context cannot be terminated while the socket is alive.
public final class ZMQSocket {
    /// The `zmq_socket` handle, or nil once closed.
    private(set) var handle: UnsafeMutableRawPointer?
    /// Strong on purpose: keeps `zmq_ctx_term` from running while this socket is open.
    public let context: ZMQContext
    /// The pattern this socket was created with.
    public let type: ZMQSocketType

    /// Creates a socket of `type` in `context`.
    public init(_ type: ZMQSocketType, context: ZMQContext) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else { throw ZMQError.last() }
        self.handle = handle
        self.context = context
        self.type = type
    }

    deinit {
        close()
    }

    /// Closes the socket now (subject to `linger` for queued outgoing messages). Safe to
    /// call repeatedly; later calls do nothing.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        _ = zmq_close(handle)
    }

    /// Whether ``close()`` has run.
    public var isClosed: Bool { handle == nil }

    /// The live handle, or the "closed socket" error.
    @usableFromInline
    func requireHandle() throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError.closedSocket }
        return handle
    }

    // MARK: Endpoints

    /// Listens on `endpoint` (`tcp://127.0.0.1:*`, `ipc:///tmp/x`, `inproc://name`).
    /// Use ``lastEndpoint`` to learn the concrete port after binding to `*`.
    public func bind(_ endpoint: String) throws(ZMQError) {
        guard zmq_bind(try requireHandle(), endpoint) == 0 else { throw ZMQError.last() }
    }

    /// Starts connecting to `endpoint`; the connection completes asynchronously (watch
    /// a ``ZMQSocketMonitor`` for `connected`), and libzmq reconnects on its own.
    public func connect(_ endpoint: String) throws(ZMQError) {
        guard zmq_connect(try requireHandle(), endpoint) == 0 else { throw ZMQError.last() }
    }

    /// Stops listening on an endpoint previously bound (use the resolved endpoint, not `*`).
    public func unbind(_ endpoint: String) throws(ZMQError) {
        guard zmq_unbind(try requireHandle(), endpoint) == 0 else { throw ZMQError.last() }
    }

    /// Drops a connection previously made with ``connect(_:)``.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        guard zmq_disconnect(try requireHandle(), endpoint) == 0 else { throw ZMQError.last() }
    }

    /// The endpoint most recently bound, with the OS-chosen port filled in for `*`
    /// (`ZMQ_LAST_ENDPOINT`). Tests bind `tcp://127.0.0.1:*` and read this so parallel
    /// tests never collide on a port.
    public var lastEndpoint: String {
        get throws(ZMQError) { try get(.lastEndpoint) }
    }
}
