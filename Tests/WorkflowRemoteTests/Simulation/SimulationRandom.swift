import RemoteTestSupport

/// The simulator's only source of randomness: the tests' seeded `SplitMix64`, so a seed replays
/// exactly.
struct SimulationRandom {
    private var generator: SplitMix64

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    mutating func next() -> UInt64 {
        generator.next()
    }

    /// The generator's position: it moves by a constant per draw, so it says how many draws the
    /// run made (for `SimulationTrace`).
    var position: UInt64 { generator.state }

    /// A number in `range` (uniform enough for scheduling).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < probability
    }

    /// A fault's rate per step, for a seed's fault mix: with probability `probability` one in a
    /// number drawn from `range`, else 0 (that fault is off for the seed).
    mutating func rate(_ probability: Double, oneIn range: ClosedRange<Int>) -> Double {
        chance(probability) ? 1.0 / Double(int(in: range)) : 0
    }

    mutating func milliseconds(in range: ClosedRange<Int>) -> Duration {
        .milliseconds(int(in: range))
    }
}

/// A first-in first-out queue without the cost of `removeFirst` (the head moves; storage is
/// compacted when half of it is behind the head).
struct SimulationQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        head += 1
        if head > 64, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }
}
