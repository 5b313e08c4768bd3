/// The faults the driver simulator injects and how often (per step), drawn from the seed (swarm
/// testing: each seed its own mix, each fault off in about half the seeds): the longest message
/// delay, and the rates of disconnects, pauses (SIGSTOP), crashes, partitions and drains.
struct SimulationFaultMix: CustomStringConvertible {
    var maxDelayMilliseconds = 5
    var disconnect = 0.0
    var pause = 0.0
    var crash = 0.0
    var partition = 0.0
    var drain = 0.0

    /// - Parameters:
    ///   - longDelays: the delays of the one seed in five with slow links, in milliseconds.
    ///   - rarity: divides the upper bounds of the rates' "one in" ranges (a simulator of fewer
    ///     steps per seed makes each fault more frequent).
    init(random: inout SimulationRandom, longDelays: ClosedRange<Int> = 20...250, rarity divisor: Int = 1) {
        maxDelayMilliseconds = random.chance(0.2) ? random.int(in: longDelays) : random.int(in: 0...10)
        disconnect = random.rate(0.5, oneIn: 500...(20_000 / divisor))
        pause = random.rate(0.5, oneIn: 500...(20_000 / divisor))
        crash = random.rate(0.5, oneIn: 2_000...(40_000 / divisor))
        partition = random.rate(0.5, oneIn: 1_000...(20_000 / divisor))
        drain = random.rate(0.5, oneIn: 2_000...(40_000 / divisor))
    }

    var description: String {
        "delay ≤ \(maxDelayMilliseconds) ms, disconnect \(disconnect), pause \(pause), crash \(crash), partition \(partition), drain \(drain)"
    }
}
