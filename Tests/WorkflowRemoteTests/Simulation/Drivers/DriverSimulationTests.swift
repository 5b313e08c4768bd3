import Foundation
import Testing
import WorkflowClusterTesting
@testable import WorkflowRemote

/// The real drivers under the deterministic simulator (`DriverSimulation`): a parent and its
/// workers as `RemoteRuntime`s stepped on one thread over a simulated network and a virtual
/// clock, many seeds, each with its own fault mix, the invariants checked after every step, then a
/// fault-free end in which every accepted event must be applied.
///
/// The sweep runs in `lanes` parts at once, each on a thread of its own (`onOwnThread`: a sweep
/// computes for tens of seconds, which on a thread of the concurrency pool would stall the rest
/// of the parallel run), each over its own seeds: lane `k` takes every `lanes`-th seed from
/// `1 + k` (disjoint; with an odd number of lanes each gets nested and flat trees alike).
///
/// The environment (`scripts/simulate.sh` sets it):
/// - `SIM_SEED=<n>` replays one seed (the command a failure prints);
/// - `SIM_SECONDS=<s>` is the long mode: new seeds for that many seconds;
/// - `SIM_DRIVER_STEPS=<n>` sets the total steps of the normal run.
/// - `SWIFT_DETERMINISTIC_HASHING=1` (Swift's own) makes the drivers' dictionaries iterate in the
///   same order in every run: only then are a seed's two runs compared, and does a replay in
///   another process follow the run that failed.
@Suite struct DriverSimulationTests {
    /// Steps per seed, then the fault-free end's limit.
    static let stepsPerSeed = 6_000
    static let settleLimit = 60_000
    /// The normal run's total steps across seeds and lanes (each seed also runs a second time,
    /// to compare the traces, which is not counted).
    static let defaultSteps = 150_000
    /// How many parts of the sweep run at once.
    static let lanes = 3

    /// One run of `seed`: its violation, if any, and the simulation as it ended.
    static func run(seed: UInt64, checks: ProtocolChecks = ProtocolChecks()) -> (
        violation: DriverSimulation.Violation?, simulation: DriverSimulation?, error: String?
    ) {
        do {
            let simulation = try DriverSimulation(seed: seed, checks: checks)
            let violation = simulation.run(steps: stepsPerSeed) ?? simulation.settle(limit: settleLimit)
            return (violation, simulation, nil)
        } catch {
            return (nil, nil, "seed \(seed): the simulation could not start: \(error)")
        }
    }

    /// Runs `body` on a thread of its own and records each failure it returns.
    static func simulate(_ body: @escaping @Sendable () -> [String]) async {
        for failure in await onOwnThread("simulation", body) { Issue.record(Comment(rawValue: failure)) }
    }

    @Test(
        "the real drivers keep each accepted event applied once, in order, within the lease, whatever the faults; each seed replays exactly",
        arguments: 0..<lanes)
    func invariantsHoldAcrossSeeds(lane: Int) async {
        await Self.simulate { Self.sweep(lane: lane) }
    }

    /// Lane `lane`'s part of the sweep (or, in lane 0, the replay of `SIM_SEED`): its failures.
    static func sweep(lane: Int) -> [String] {
        let environment = SimulationEnvironment(stepsVariable: "SIM_DRIVER_STEPS", defaultSteps: defaultSteps)
        if let seed = environment.replaySeed {
            guard lane == 0 else { return [] }
            let (violation, simulation, error) = run(seed: seed)
            if let error { return [error] }
            print("driver simulation, seed \(seed)\(simulation!.nested ? " (nested workers)" : ""): \(simulation!.faults); \(simulation!.totals), trace \(simulation!.trace)")
            return violation.map { ["\($0)\n  faults: \(simulation!.faults)"] } ?? []
        }
        // Lane `lane` takes the seeds ≡ 1 + lane (mod lanes): disjoint from the other lanes'
        // whatever seed each begins at (the long mode's come from the clock).
        var seed = (environment.firstSeed - 1) * UInt64(Self.lanes) + 1 + UInt64(lane)
        var seeds = 0
        var nestedSeeds = 0
        var totals = DriverSimulation.Counts()
        var simulated = Duration.zero
        let started = Date()
        // The drivers keep hashed dictionaries, whose order Swift seeds per process and per
        // dictionary unless this is set: without it a run is still checked, but two runs of a
        // seed may visit workers in another order, so their traces are not compared.
        let deterministicHashing = ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == "1"
        if !deterministicHashing {
            print("driver simulation: the runs' traces are not compared (set SWIFT_DETERMINISTIC_HASHING=1, as scripts/test.sh and scripts/simulate.sh do)")
        }
        while environment.continues(after: totals.steps, lanes: lanes) {
            // The long mode names each seed before it runs: the real drivers can trap (a
            // precondition, a lock taken twice), which ends the process before any report.
            if environment.deadline != nil { print("driver simulation: seed \(seed)") }
            let (violation, simulation, error) = run(seed: seed)
            if let error { return [error] }
            if let violation { return ["\(violation)\n  faults: \(simulation!.faults)"] }
            // Determinism (madsim's check): the same seed again does exactly the same, step by
            // step, or a seed that finds a bug would not replay it.
            let (_, again, _) = deterministicHashing ? run(seed: seed) : (nil, simulation, nil)
            guard let simulation, let again, again.trace == simulation.trace, again.count.steps == simulation.count.steps else {
                return [
                    "driver simulation, seed \(seed) ran twice and the runs differ (trace \(simulation?.trace.description ?? "-") in \(simulation?.count.steps ?? 0) steps, then \(again?.trace.description ?? "-") in \(again?.count.steps ?? 0)): the simulation reads something besides its seed"
                ]
            }
            totals.add(simulation.totals)
            simulated += simulation.elapsed
            seeds += 1
            if simulation.nested { nestedSeeds += 1 }
            seed += UInt64(lanes)
        }
        print("driver simulation, lane \(lane) of \(lanes): \(totals.steps) steps over \(seeds) seeds (\(nestedSeeds) with nested workers)\(deterministicHashing ? ", each run twice with the same trace," : "") \(SimulationEnvironment.pace(simulated: simulated, since: started)): \(totals)")
        // The fault mix ran: the drivers met each kind of fault somewhere in the sweep.
        if seeds > 10, totals.crashes == 0 || totals.disconnects == 0 || totals.malformed == 0 || totals.stale == 0 || totals.drains == 0 {
            return ["the sweep injected no fault of some kind: \(totals)"]
        }
        if seeds > 2, totals.leaseChecks == 0 { return ["no applied action was checked against its worker's lease: \(totals)"] }
        // The nested seeds ran their tree: events reached counters on nested workers' workers.
        if nestedSeeds > 2, totals.appliedThroughNestedWorkers == 0 {
            return ["the nested seeds applied no event through a nested worker: \(totals)"]
        }
        // Nested workers' processes started again (a crash, a drain), and their workers joined
        // the new process and applied events again.
        if nestedSeeds > 10, totals.nestedRestarts == 0 || totals.rejoinsAfterNestedRestarts == 0 {
            return ["no nested worker started again and was rejoined by its workers: \(totals)"]
        }
        if seeds > 10, totals.handovers == 0 { return ["no handover began: \(totals)"] }
        return []
    }
}
