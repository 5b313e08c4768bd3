@testable import WorkflowRemote

/// A deterministic simulation of one parent and its workers in one thread, on a virtual clock,
/// with a seeded scheduler: the workers run the worker role's real state machine; the network
/// delays, loses (on a disconnect) and holds (partitions) messages the way ZeroMQ connections
/// do; processes are stopped and resumed late, crash and restart. Each seed picks its own mix of
/// faults (swarm testing). The invariants are checked after every step; a violation stops the
/// run and is reported with the seed that replays it.
final class Simulation {
    typealias Instant = ContinuousClock.Instant

    /// Which faults a run injects, and how often (per step). Drawn from the seed.
    struct FaultMix: CustomStringConvertible {
        var maxDelayMilliseconds = 5
        var disconnect = 0.0
        var pause = 0.0
        var crash = 0.0
        var partition = 0.0
        var drain = 0.0

        init(random: inout SimulationRandom) {
            maxDelayMilliseconds = random.chance(0.2) ? random.int(in: 20...250) : random.int(in: 0...10)
            if random.chance(0.5) { disconnect = 1.0 / Double(random.int(in: 500...20_000)) }
            if random.chance(0.5) { pause = 1.0 / Double(random.int(in: 500...20_000)) }
            if random.chance(0.5) { crash = 1.0 / Double(random.int(in: 2_000...40_000)) }
            if random.chance(0.5) { partition = 1.0 / Double(random.int(in: 1_000...20_000)) }
            if random.chance(0.5) { drain = 1.0 / Double(random.int(in: 2_000...40_000)) }
        }

        var description: String {
            "delay ≤ \(maxDelayMilliseconds) ms, disconnect \(disconnect), pause \(pause), crash \(crash), partition \(partition), drain \(drain)"
        }
    }

    /// What a run did, for the test's report.
    struct Counts {
        var steps = 0
        var applied = 0
        var droppedEventMessages = 0
        var lostInputFences = 0
        var rehandshakeFences = 0
        var disconnects = 0
        var pauses = 0
        var crashes = 0
        var partitions = 0
        var moves = 0
        var drains = 0
        var handedOver = 0
        var released = 0

        /// Adds another run's counts (the test's totals across seeds).
        mutating func add(_ other: Counts) {
            steps += other.steps
            applied += other.applied
            droppedEventMessages += other.droppedEventMessages
            lostInputFences += other.lostInputFences
            rehandshakeFences += other.rehandshakeFences
            disconnects += other.disconnects
            pauses += other.pauses
            crashes += other.crashes
            partitions += other.partitions
            moves += other.moves
            drains += other.drains
            handedOver += other.handedOver
            released += other.released
        }
    }

    /// A broken invariant, with what replays it.
    struct Violation: Error, CustomStringConvertible {
        let seed: UInt64
        let step: Int
        let message: String
        var description: String {
            "seed \(seed), step \(step): \(message)\n  replay: SIM_SEED=\(seed) swift test --skip-build --filter WorkerSimulationTests"
        }
    }

    let seed: UInt64
    var random: SimulationRandom
    let faults: FaultMix
    let configuration: WorkerStateMachine<SimulatedChild>.Configuration
    private(set) var now: Instant
    let parent: SimulatedParent
    private(set) var workers: [SimulatedWorker] = []
    private(set) var connections: [SimulatedConnection] = []
    var count = Counts()
    private var nextConnection = 1
    private var nextIncarnation = 1
    /// Partitions per worker: until when each direction is held.
    private var toWorkerHeldUntil: [Instant]
    private var toParentHeldUntil: [Instant]
    /// The live epoch of each child (the parent's latest placement).
    private var liveEpoch: [UInt64: UInt64] = [:]
    private(set) var violations: [String] = []
    static let memoryBound = 2_000
    /// Whether START says which event its snapshot includes (its header's acknowledgement).
    let startCarriesBase: Bool
    /// Whether the parent checks the OUTPUTS messages' numbers (off: the protocol before the fix,
    /// to show the simulator finds the loss).
    let parentChecksOutputsNumbers: Bool
    /// Whether the parent takes events left unacknowledged past its deadline for lost (off: the
    /// protocol before it, to show the simulator finds the stall).
    let parentDeadlinesAcknowledgements: Bool
    /// Whether workers check that an EVENT's first event follows the last applied (off: the
    /// protocol before the fix).
    let workerChecksEventSequence: Bool
    /// Whether workers rejoin when their connection is re-established (off: the protocol before
    /// the fix, when only a later message revealed a loss, and a lost last message was never
    /// revealed).
    let workerRejoinsOnRehandshake: Bool

    init(
        seed: UInt64, startCarriesBase: Bool = true, parentChecksOutputsNumbers: Bool = true, parentDeadlinesAcknowledgements: Bool = true,
        workerChecksEventSequence: Bool = true, workerRejoinsOnRehandshake: Bool = true
    ) {
        self.parentDeadlinesAcknowledgements = parentDeadlinesAcknowledgements
        self.seed = seed
        self.workerRejoinsOnRehandshake = workerRejoinsOnRehandshake
        self.workerChecksEventSequence = workerChecksEventSequence
        self.startCarriesBase = startCarriesBase
        self.parentChecksOutputsNumbers = parentChecksOutputsNumbers
        random = SimulationRandom(seed: seed)
        faults = FaultMix(random: &random)
        configuration = .init(heartbeatInterval: .milliseconds(100), heartbeatLiveness: 3, capacity: 100, hasParent: true)
        now = ContinuousClock.now
        let workerCount = random.int(in: 2...4)
        parent = SimulatedParent(
            children: random.int(in: 1...3), interval: configuration.heartbeatInterval, liveness: configuration.heartbeatLiveness,
            deadlinesAcknowledgements: parentDeadlinesAcknowledgements)
        toWorkerHeldUntil = Array(repeating: now, count: workerCount)
        toParentHeldUntil = Array(repeating: now, count: workerCount)
        for index in 0..<workerCount {
            let worker = SimulatedWorker(
                index: index, incarnation: takeIncarnation(), configuration: configuration, connection: connect(worker: index, at: now), now: now)
            workers.append(worker)
            worker.start(at: now, in: self)
        }
    }

    private func takeIncarnation() -> Int {
        defer { nextIncarnation += 1 }
        return nextIncarnation
    }

    // MARK: What the processes ask of the world

    /// A new connection from worker `index` (a fresh socket).
    func connect(worker index: Int, at time: Instant) -> SimulatedConnection {
        let connection = SimulatedConnection(id: nextConnection, worker: index, handshakeAt: time + delay())
        nextConnection += 1
        connections.append(connection)
        return connection
    }

    /// A message's delay on a link.
    func delay() -> Duration {
        random.milliseconds(in: 0...faults.maxDelayMilliseconds)
    }

    func bothWaysOpen(for worker: Int) -> Bool {
        toWorkerHeldUntil[worker] <= now && toParentHeldUntil[worker] <= now
    }

    func violation(_ message: String) {
        violations.append(message)
    }

    func started(_ child: SimulatedChild) {}

    func stopped(_ child: SimulatedChild) {}

    func moved(_ childID: UInt64, toEpoch epoch: UInt64) {
        liveEpoch[childID] = epoch
        count.moves += 1
    }

    /// A copy applies an event: the invariants of every action.
    func apply(_ sequence: UInt64, by child: SimulatedChild, worker: SimulatedWorker, at time: Instant) {
        count.applied += 1
        // The lease: nothing is applied by a worker that has not heard from its parent for the
        // liveness window (it may have been declared dead, its child moved).
        if time - worker.lastHeard > configuration.liveness {
            violation("worker \(worker.index) applied event \(sequence) of child \(child.childID) \(time - worker.lastHeard) after it last heard from its parent")
        }
        // Each event once, in order, within the lineage of snapshots the copy started from.
        if sequence != child.state.applied + 1 {
            violation("child \(child.childID) epoch \(child.epoch) applied event \(sequence) after \(child.state.applied)")
        }
        // A copy of an epoch older than the parent's latest placement may only finish what it
        // was sent before the move; a copy of a newer epoch cannot exist.
        if let live = liveEpoch[child.childID], child.epoch > live {
            violation("child \(child.childID): a copy of epoch \(child.epoch) applied while the parent is at epoch \(live)")
        }
        child.state.applied = sequence
        child.state.count += 1
    }

    // MARK: Running

    /// Runs `steps` steps; returns the first violation, if any.
    func run(steps: Int) -> Violation? {
        for _ in 0..<steps {
            step()
            if let message = violations.first { return Violation(seed: seed, step: count.steps, message: message) }
        }
        return nil
    }

    /// Heals every fault, stops new events and runs until every event is acknowledged (or
    /// `limit` steps passed: then the run is stuck, a violation of progress).
    func settle(limit: Int) -> Violation? {
        parent.generating = false
        for index in workers.indices {
            toWorkerHeldUntil[index] = now
            toParentHeldUntil[index] = now
        }
        let faultFree = faults
        var quiet = 0
        while quiet < limit {
            quietStep()
            quiet += 1
            if let message = violations.first { return Violation(seed: seed, step: count.steps, message: message) }
            if parent.isSettled, quiet > 1000 { return nil }
        }
        _ = faultFree
        return Violation(
            seed: seed, step: count.steps, message: "no progress: events still unacknowledged after \(limit) fault-free steps\n\(stateDescription)")
    }

    /// Where each child and worker stands, for a report of no progress.
    var stateDescription: String {
        var lines: [String] = []
        for child in parent.children {
            lines.append(
                "  parent: child \(child.id) epoch \(parent.machine.epoch(of: child.id)) on connection \(child.host.map(String.init) ?? "-"), "
                    + "events made through \(child.nextSequence - 1), sent through \(child.sentThrough), acknowledged \(child.acknowledged.applied), "
                    + "outputs through \(parent.lastOutput(of: child.id))\(child.isReleasing ? ", releasing" : "")")
        }
        for worker in workers {
            let hosted = worker.machine.children.values.sorted { $0.childID < $1.childID }.map {
                "child \($0.childID) epoch \($0.epoch) applied \($0.applied) acknowledged \($0.acknowledged)"
            }
            lines.append(
                "  worker \(worker.index) on connection \(worker.connection.id)\(worker.connection.isClosed ? " (closed)" : ""), "
                    + "welcomed \(worker.machine.isWelcomed): \(hosted.joined(separator: "; "))")
        }
        return lines.joined(separator: "\n")
    }

    private func step() {
        count.steps += 1
        now += random.milliseconds(in: 0...2)
        injectFaults()
        advance()
        checkMemory()
    }

    private func quietStep() {
        count.steps += 1
        now += random.milliseconds(in: 0...2)
        for worker in workers {
            if let until = worker.pausedUntil, until > now { worker.pausedUntil = now }
        }
        advance()
        checkMemory()
    }

    private func advance() {
        for connection in connections where !connection.isClosed {
            let worker = connection.worker
            connection.deliver(at: now, toWorkerBlocked: toWorkerHeldUntil[worker] > now, toParentBlocked: toParentHeldUntil[worker] > now)
        }
        connections.removeAll { $0.isClosed }
        for worker in workers {
            if let until = worker.pausedUntil, until <= now { worker.pausedUntil = nil }
            if let until = worker.downUntil, until <= now {
                worker.restart(incarnation: takeIncarnation(), connection: connect(worker: worker.index, at: now), at: now)
                worker.start(at: now, in: self)
            }
        }
        let actor = random.int(in: 0...workers.count)
        if actor == workers.count {
            parent.step(at: now, connections: connections, in: self)
        } else if workers[actor].isRunning {
            workers[actor].step(at: now, in: self)
        }
    }

    private func injectFaults() {
        let index = random.int(in: 0...(workers.count - 1))
        let worker = workers[index]
        if random.chance(faults.disconnect) {
            worker.connection.disconnect(reconnectAt: now + random.milliseconds(in: 1...50))
            count.disconnects += 1
        }
        if random.chance(faults.pause), worker.isRunning {
            // Sometimes shorter than the liveness window, sometimes far longer.
            worker.pausedUntil = now + random.milliseconds(in: 50...1_500)
            count.pauses += 1
        }
        if random.chance(faults.crash), worker.downUntil == nil {
            worker.crash(until: now + random.milliseconds(in: 50...1_000), in: self)
            count.crashes += 1
        }
        if random.chance(faults.drain), worker.isRunning, !worker.isApplyingEvents {
            worker.drain(at: now, in: self)
        }
        if random.chance(faults.partition) {
            let until = now + random.milliseconds(in: 50...1_500)
            switch random.int(in: 0...2) {
            case 0: toWorkerHeldUntil[index] = until
            case 1: toParentHeldUntil[index] = until
            default:
                toWorkerHeldUntil[index] = until
                toParentHeldUntil[index] = until
            }
            count.partitions += 1
        }
    }

    private func checkMemory() {
        for worker in workers where worker.memory > Self.memoryBound {
            violation("worker \(worker.index) holds \(worker.memory) entries")
        }
        if connections.count > 4 * workers.count + 4 { violation("\(connections.count) connections open") }
        if parent.memory > 4 * workers.count { violation("the parent knows \(parent.memory) peers") }
    }
}
