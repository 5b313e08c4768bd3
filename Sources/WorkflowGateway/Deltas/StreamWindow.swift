/// The messages a delta client was sent and has not acknowledged yet: at most `limit`
/// (`gateway.stream_window`), so a client that stops reading never makes the coordinator hold
/// more than that for it. A full window sends nothing more until an acknowledgement; then the
/// client gets one message from what it has to the latest (a delta while its frame is kept,
/// else a whole frame).
struct StreamWindow: Sendable, Equatable {
    let limit: Int
    /// The sequences sent and not yet acknowledged, oldest first.
    private(set) var unacknowledged: [UInt64] = []
    /// The latest sequence acknowledged.
    private(set) var acknowledged: UInt64?

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Whether nothing more may be sent before an acknowledgement.
    var isFull: Bool { unacknowledged.count >= limit }

    /// The last message sent (the frame the client has or will have applied).
    mutating func sent(_ sequence: UInt64) {
        unacknowledged.append(sequence)
    }

    /// The client applied every message up to the one of `sequence` (acknowledgements are
    /// cumulative; an old one again changes nothing). One of a sequence never sent is refused.
    mutating func acknowledge(_ sequence: UInt64) throws(StreamRequestError) {
        if let index = unacknowledged.lastIndex(of: sequence) {
            unacknowledged.removeFirst(index + 1)
            acknowledged = sequence
        } else if let acknowledged, sequence <= acknowledged {
            return
        } else {
            throw StreamRequestError(code: "bad-ack", message: "acknowledged sequence \(sequence), which this stream did not send")
        }
    }
}
