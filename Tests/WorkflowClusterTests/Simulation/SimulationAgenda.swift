/// The simulation's callbacks by virtual time: a binary heap ordered by time, then by the order
/// they were scheduled, so that a seed runs them in one order only.
struct SimulationAgenda {
    private struct Item {
        var at: Duration
        var order: Int
        var action: () -> Void

        func precedes(_ other: Item) -> Bool { at < other.at || (at == other.at && order < other.order) }
    }

    private var heap: [Item] = []
    private var scheduled = 0

    /// Schedules `action` at `at`.
    mutating func push(at: Duration, _ action: @escaping () -> Void) {
        scheduled += 1
        heap.append(Item(at: at, order: scheduled, action: action))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest callback.
    mutating func pop() -> (Duration, () -> Void)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var least = parent
            if left < heap.count, heap[left].precedes(heap[least]) { least = left }
            if right < heap.count, heap[right].precedes(heap[least]) { least = right }
            guard least != parent else { break }
            heap.swapAt(parent, least)
            parent = least
        }
        return (first.at, first.action)
    }
}
