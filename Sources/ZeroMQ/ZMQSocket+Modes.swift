extension ZMQSocket {
    /// How a send behaves when the message cannot be queued right away (high-water mark
    /// reached, or no peer yet for patterns that need one).
    public enum SendMode: Sendable, Hashable {
        /// Wait until the message is queued, or until `sendTimeout` expires (then throws
        /// ``ZMQError/isAgain``).
        case blocking
        /// Never wait: throw ``ZMQError/isAgain`` if the message cannot be queued now.
        /// An event loop uses this so one slow peer cannot stall every other socket.
        case dontWait
    }

    /// How a receive behaves when no message is waiting. In every mode "nothing arrived"
    /// is reported as a `nil` result rather than an error, because it is an expected
    /// outcome for callers that poll, not a failure.
    public enum ReceiveMode: Sendable, Hashable {
        /// Wait for a message (returns nil only if `receiveTimeout` is set and expires).
        case blocking
        /// Return a waiting message or nil immediately (`ZMQ_DONTWAIT`).
        case dontWait
        /// Wait at most this long (via `zmq_poll`), then return nil.
        case timeout(Duration)
    }
}
