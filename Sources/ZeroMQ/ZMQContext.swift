import CZeroMQ

/// A libzmq context: the I/O threads and the namespace for `inproc://` endpoints.
///
/// Sockets that talk over `inproc://` (including socket monitors and a ZAP handler at
/// `inproc://zeromq.zap.01`) must share a context, so a process normally creates one and
/// hands it to every socket.
///
/// ## Lifetime
/// `zmq_ctx_term` runs exactly once, in `deinit`. It blocks until every socket of the
/// context is closed and their pending messages are flushed (subject to each socket's
/// `linger`). Every ``ZMQSocket`` keeps a **strong** reference to its context, so the
/// context can only be deinitialised after its sockets are gone — without that, the
/// optimiser may end the context's lifetime early and `zmq_ctx_term` would hang waiting
/// for a socket that is still alive. Set `linger` on sockets that may hold undeliverable
/// messages, or the final release of the context blocks for as long as linger allows.
///
/// ## Thread safety
/// libzmq documents contexts as thread-safe, so this type is `Sendable`. It is
/// `@unchecked` only because it stores the raw C handle, which is immutable after `init`.
public final class ZMQContext: @unchecked Sendable {
    /// The `zmq_ctx_new` handle; never nil, freed only in `deinit`.
    let handle: UnsafeMutableRawPointer

    /// Creates a context. Fails (rather than trapping) when the process is out of file
    /// descriptors, which is a real possibility for a long-running host.
    public init() throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last() }
        self.handle = handle
    }

    /// Makes every blocking call on this context's sockets, on any thread, fail with
    /// `ETERM` (``ZMQError/isTerminated``), without destroying the context.
    ///
    /// This is the escape hatch for stopping threads blocked inside libzmq when no
    /// ``ZMQWakeup`` is in reach. Safe to call from any thread, any number of times.
    public func shutdown() {
        _ = zmq_ctx_shutdown(handle)
    }

    deinit {
        // zmq_ctx_term may be interrupted by a signal; it must still complete exactly once.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
