import Foundation

/// What a simulation suite reads from the environment (`scripts/simulate.sh` sets it; every suite
/// named `…SimulationTests` follows it): a seed to replay (`SIM_SEED`), the long mode's length
/// (`SIM_SECONDS`: new seeds from the clock until then), and the normal run's total of steps (the
/// suite's own variable, or its default).
struct SimulationEnvironment {
    /// The seed to replay, if one is asked for.
    let replaySeed: UInt64?
    /// When the long mode ends (nil: the normal run).
    let deadline: Date?
    /// The normal run's total of steps.
    let totalSteps: Int

    init(stepsVariable: String, defaultSteps: Int, environment: [String: String] = ProcessInfo.processInfo.environment) {
        replaySeed = environment["SIM_SEED"].flatMap { UInt64($0) }
        deadline = environment["SIM_SECONDS"].flatMap(Double.init).map { Date() + $0 }
        totalSteps = environment[stepsVariable].flatMap(Int.init) ?? defaultSteps
    }

    /// The sweep's first seed: from the clock in the long mode (new ground every run), 1 in the
    /// normal one (the same seeds every run).
    var firstSeed: UInt64 { deadline == nil ? 1 : UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Whether the sweep, or one of its `lanes` parts running at once, goes on after `steps`
    /// steps (each part runs its share of the total).
    func continues(after steps: Int, lanes: Int = 1) -> Bool {
        deadline.map { Date() < $0 } ?? (steps < totalSteps / lanes)
    }

    /// How fast a sweep that began at `started` went, having simulated `simulated`: "in N s
    /// (M simulated seconds, K per real second)".
    static func pace(simulated: Duration, since started: Date) -> String {
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let simulatedSeconds = Double(simulated.components.seconds) + Double(simulated.components.attoseconds) / 1e18
        return "in \(Int(seconds)) s (\(Int(simulatedSeconds)) simulated seconds, \(Int(simulatedSeconds / seconds)) per real second)"
    }
}
