import CZeroMQ

/// A failure reported by libzmq (or by a POSIX call this binding makes on libzmq's behalf).
///
/// Every fallible call in this module throws `ZMQError` instead of trapping, because in a
/// process tree a peer vanishing, a context being shut down or a full queue are ordinary
/// runtime events that the caller must be able to react to. The raw `errno` is kept so
/// callers can match codes this type has no helper for. The text comes from `zmq_strerror`
/// when asked for (its strings are static and thread-safe): an `EAGAIN` that only ends a
/// non-blocking receive costs no string.
public struct ZMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value libzmq reported (POSIX codes or libzmq's own `EFSM`, `ETERM`, ...).
    public let code: Int32
    /// Human-readable text from `zmq_strerror`, for logs and test failure messages.
    public var message: String { String(cString: zmq_strerror(code)) }

    /// Wraps an explicit error code; useful for comparing against a known failure.
    public init(code: Int32) {
        self.code = code
    }

    /// Captures libzmq's thread-local `errno` right after a failed call.
    @usableFromInline
    static func last() -> ZMQError {
        ZMQError(code: zmq_errno())
    }

    /// `EAGAIN`: a non-blocking operation would have blocked, or a send/receive timeout
    /// expired. This is the expected "nothing to do right now" signal, not a fault.
    public var isAgain: Bool { code == EAGAIN }

    /// `EHOSTUNREACH`: a ROUTER with `routerMandatory` was asked to send to a routing id
    /// that is not (or no longer) connected — i.e. the peer is gone.
    public var isHostUnreachable: Bool { code == EHOSTUNREACH }

    /// `ETERM`: the owning context is being terminated or was shut down; the socket should
    /// be closed and the owning loop should exit.
    public var isTerminated: Bool { code == ETERM }

    /// `EINTR`: a signal interrupted a blocking call. The binding retries blocking calls
    /// itself, so callers normally never see this.
    public var isInterrupted: Bool { code == EINTR }

    /// `ENOTSOCK`: the socket was already closed (or never valid).
    public var isClosedSocket: Bool { code == ENOTSOCK }

    /// A short rendering such as `ZMQError(11: Resource temporarily unavailable)`.
    public var description: String { "ZMQError(\(code): \(message))" }

    /// The error thrown when an operation is attempted on a closed socket.
    static var closedSocket: ZMQError { ZMQError(code: ENOTSOCK) }
}
