import Synchronization

/// What the load's events came to: each shown event's latency, the accepted count, the refusals.
final class EventTally: Sendable {
    private let latencies = Mutex<[UInt64]>([])
    private let refusals = Mutex<[String]>([])
    private let acceptedCount = Atomic<Int>(0)

    func shown(_ shown: [UInt64]) {
        guard !shown.isEmpty else { return }
        latencies.withLock { $0 += shown }
    }

    func accepted() { acceptedCount.add(1, ordering: .relaxed) }

    func refused(_ answer: String) { refusals.withLock { $0.append(answer) } }

    var acceptedTotal: Int { acceptedCount.load(ordering: .relaxed) }
    var refused: [String] { refusals.withLock { $0 } }
    var sortedLatencies: [UInt64] { latencies.withLock { $0 }.sorted() }
}
