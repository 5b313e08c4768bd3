import Synchronization

/// The gateway's open client connections, counted across its event loops, for its connection
/// limit.
final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts a new connection; `false` when that makes more than `limit` (it is counted all
    /// the same, and `close` uncounts it).
    func open(limit: Int) -> Bool {
        count.wrappingAdd(1, ordering: .relaxed).newValue <= limit
    }

    /// Uncounts a closed connection.
    func close() {
        count.wrappingSubtract(1, ordering: .relaxed)
    }

    /// The connections open now.
    var value: Int { count.load(ordering: .relaxed) }
}
