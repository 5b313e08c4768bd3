import Tracing

/// The trace contexts of events a parent recorded and has not sent yet, by child and sequence.
///
/// Kept beside the events' ledger rather than in it, so that with tracing off (or no traced
/// event in flight) recording, sending and acknowledging events cost exactly what they did: this
/// table stays empty and is only asked whether it is. A context is taken when its event is first
/// sent; a replay after a failover is not traced again.
struct EventTraceContexts {
    /// An event of one child.
    struct Key: Hashable {
        var childID: UInt64
        var sequence: UInt64
    }

    /// The most contexts kept: events of children that stopped before sending them would
    /// otherwise stay forever. Past it the table starts afresh (those events go untraced).
    static let limit = 10_000

    private var contexts: [Key: ServiceContext] = [:]

    var isEmpty: Bool { contexts.isEmpty }

    /// Keeps `context` for `childID`'s event `sequence`.
    mutating func record(_ context: ServiceContext, childID: UInt64, sequence: UInt64) {
        if contexts.count >= Self.limit { contexts.removeAll() }
        contexts[Key(childID: childID, sequence: sequence)] = context
    }

    /// The context of `childID`'s event `sequence`, forgotten here; `nil` if it was not traced.
    mutating func take(childID: UInt64, sequence: UInt64) -> ServiceContext? {
        contexts.removeValue(forKey: Key(childID: childID, sequence: sequence))
    }
}
