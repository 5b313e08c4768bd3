@testable import WorkflowRemote

/// A deterministic simulation of one parent and its workers in one thread, on a virtual clock,
/// with a seeded scheduler: the workers run the worker role's real state machine; the network
/// delays, loses (on a disconnect) and holds (partitions) messages the way ZeroMQ connections
/// do; processes are stopped and resumed late, crash and restart. Each seed picks its own mix of
/// faults (swarm testing). The invariants are checked after every step; a violation stops the
/// run and is reported with the seed that replays it.
///
/// With `nested`, some workers are nested workers (a worker that is also a parent): each runs a
/// parent role beside its worker role, in one process, with workers of its own (leaf workers)
/// hosting its children, whose events are made by the events its own hosted children apply. The
/// same faults hit every process and link of the tree, and the same invariants hold at each
/// level.
final class Simulation {
    typealias Instant = ContinuousClock.Instant

    /// Which faults a run injects, and how often (per step). Drawn from the seed.
    typealias FaultMix = SimulationFaultMix

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
        /// Events applied by leaf workers (children of a nested worker's parent role), and the
        /// parent roles nested workers started (one per incarnation).
        var appliedByLeaves = 0
        var nestedParents = 0

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
            appliedByLeaves += other.appliedByLeaves
            nestedParents += other.nestedParents
        }
    }

    /// A broken invariant, with what replays it.
    struct Violation: Error, CustomStringConvertible {
        let seed: UInt64
        let nested: Bool
        let step: Int
        let message: String
        var description: String {
            "seed \(seed)\(nested ? " (nested workers)" : ""), step \(step): \(message)\n  replay: scripts/simulate.sh --seed \(seed) --nested \(nested ? 1 : 0) --suite WorkerSimulationTests"
        }
    }

    let seed: UInt64
    var random: SimulationRandom
    let faults: FaultMix
    let configuration: WorkerStateMachine<SimulatedChild>.Configuration
    private(set) var now: Instant
    let parent: SimulatedParent
    private(set) var workers: [SimulatedWorker] = []
    /// The connections to each parent: `[0]` the top parent's, `[1 + w]` those of worker `w`'s
    /// parent role (empty unless it is a nested worker).
    private var connectionsByParent: [[SimulatedConnection]] = [[]]
    /// Where each worker's connections go (an index into `connectionsByParent`).
    private var parentSlot: [Int] = []
    var count = Counts()
    /// What the run did so far, hashed step by step (two runs of one seed must agree).
    private(set) var trace = SimulationTrace()
    /// Virtual time simulated so far.
    var elapsed: Duration { now - started }
    /// The clock at the start, which `trace` measures from.
    private let started: Instant
    private var nextConnection = 1
    private var nextIncarnation = 1
    /// Whether some workers are nested workers.
    let nested: Bool
    /// The roles that take turns at the steps: the top parent, each worker role, and each nested
    /// worker's parent role (`tick()`).
    private var roles = 1
    /// The next id of a nested parent role's child (unique across the run: an old incarnation's
    /// copies may still run on leaf workers until their lease runs out).
    private var nextChildID: UInt64 = 1
    /// Whether the parents keep making events (off for the quiet end of a run).
    private var generating = true
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
        workerChecksEventSequence: Bool = true, workerRejoinsOnRehandshake: Bool = true, nested: Bool = false
    ) {
        self.nested = nested
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
        started = now
        let workerCount = random.int(in: 2...4)
        let childCount = random.int(in: 1...3)
        parent = SimulatedParent(
            childIDs: (1...childCount).map(UInt64.init), interval: configuration.heartbeatInterval, liveness: configuration.heartbeatLiveness,
            deadlinesAcknowledgements: parentDeadlinesAcknowledgements)
        nextChildID = UInt64(childCount) + 1
        toWorkerHeldUntil = []
        toParentHeldUntil = []
        for _ in 0..<workerCount { addWorker(joining: nil) }
        guard nested else { return }
        // Nested workers: one or two of the top parent's workers are also parents, each with
        // leaf workers of its own.
        for host in 0..<random.int(in: 1...min(2, workerCount)) {
            workers[host].nested = makeNestedParent()
            for _ in 0..<random.int(in: 1...3) { addWorker(joining: host) }
        }
        roles = 1 + workers.count + workers.filter { $0.nested != nil }.count
    }

    /// A new worker process joining the top parent (`host` nil) or nested worker `host`.
    private func addWorker(joining host: Int?) {
        let index = workers.count
        toWorkerHeldUntil.append(now)
        toParentHeldUntil.append(now)
        parentSlot.append(host.map { $0 + 1 } ?? 0)
        connectionsByParent.append([])
        let worker = SimulatedWorker(
            index: index, parentIndex: host, incarnation: takeIncarnation(), configuration: configuration,
            connection: connect(worker: index, at: now), now: now)
        workers.append(worker)
        worker.start(at: now, in: self)
    }

    /// A nested worker's parent role, new with each incarnation of its process (its memory is
    /// lost with the process; its children take new ids).
    private func makeNestedParent() -> SimulatedParent {
        let childCount = UInt64(random.int(in: 1...2))
        defer { nextChildID += childCount }
        count.nestedParents += 1
        let nestedParent = SimulatedParent(
            childIDs: (nextChildID..<(nextChildID + childCount)).map { $0 }, interval: configuration.heartbeatInterval,
            liveness: configuration.heartbeatLiveness, deadlinesAcknowledgements: parentDeadlinesAcknowledgements, eventsOnDemand: true)
        nestedParent.generating = generating
        return nestedParent
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
        connectionsByParent[parentSlot[index]].append(connection)
        return connection
    }

    /// A worker's process ended (crashed, or left after a drain): a nested worker's parent role
    /// ends with it, and its workers' connections break until the process starts again.
    func processEnded(_ worker: SimulatedWorker) {
        guard worker.nested != nil, let restartsAt = worker.downUntil else { return }
        for connection in connectionsByParent[worker.index + 1] { connection.parentEnded(restartsAt: restartsAt) }
    }

    /// A message's delay on a link.
    func delay() -> Duration {
        random.milliseconds(in: 0...faults.maxDelayMilliseconds)
    }

    /// Whether a handshake can complete on worker `worker`'s link: neither direction held, and
    /// the parent's process up (a nested worker's may be down, restarting).
    func bothWaysOpen(for worker: Int) -> Bool {
        guard toWorkerHeldUntil[worker] <= now, toParentHeldUntil[worker] <= now else { return false }
        guard let host = workers[worker].parentIndex else { return true }
        return workers[host].downUntil == nil
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
        if worker.parentIndex != nil { count.appliedByLeaves += 1 }
        // A nested worker's hosted child asks its parent role for an event of its own child.
        worker.nested?.demand(from: child.childID)
    }

    // MARK: Running

    /// Runs `steps` steps; returns the first violation, if any.
    func run(steps: Int) -> Violation? {
        for _ in 0..<steps {
            step()
            if let message = violations.first { return Violation(seed: seed, nested: nested, step: count.steps, message: message) }
        }
        return nil
    }

    /// Heals every fault, stops new events and runs until every event is acknowledged (or
    /// `limit` steps passed: then the run is stuck, a violation of progress).
    func settle(limit: Int) -> Violation? {
        generating = false
        parent.generating = false
        for worker in workers { worker.nested?.generating = false }
        for index in workers.indices {
            toWorkerHeldUntil[index] = now
            toParentHeldUntil[index] = now
        }
        let faultFree = faults
        var quiet = 0
        while quiet < limit {
            quietStep()
            quiet += 1
            if let message = violations.first { return Violation(seed: seed, nested: nested, step: count.steps, message: message) }
            if parent.isSettled, workers.allSatisfy({ $0.nested?.isSettled ?? true }), quiet > 1000 { return nil }
        }
        _ = faultFree
        return Violation(
            seed: seed, nested: nested, step: count.steps, message: "no progress: events still unacknowledged after \(limit) fault-free steps\n\(stateDescription)")
    }

    /// Where each child and worker stands, for a report of no progress.
    var stateDescription: String {
        var lines = describe(parent, as: "parent")
        for worker in workers {
            if let nested = worker.nested { lines += describe(nested, as: "worker \(worker.index)'s parent role") }
            let hosted = worker.machine.children.values.sorted { $0.childID < $1.childID }.map {
                "child \($0.childID) epoch \($0.epoch) applied \($0.applied) acknowledged \($0.acknowledged)"
            }
            lines.append(
                "  worker \(worker.index) on connection \(worker.connection.id)\(worker.connection.isClosed ? " (closed)" : ""), "
                    + "welcomed \(worker.machine.isWelcomed): \(hosted.joined(separator: "; "))")
        }
        return lines.joined(separator: "\n")
    }

    private func describe(_ parent: SimulatedParent, as name: String) -> [String] {
        var lines: [String] = []
        for child in parent.children {
            lines.append(
                "  \(name): child \(child.id) epoch \(parent.machine.epoch(of: child.id)) on connection \(child.host.map(String.init) ?? "-"), "
                    + "events made through \(child.nextSequence - 1), sent through \(child.sentThrough), acknowledged \(child.acknowledged.applied), "
                    + "outputs through \(parent.lastOutput(of: child.id))\(child.isReleasing ? ", releasing" : "")")
        }
        return lines
    }

    /// Advances the virtual clock by one step's time. The processes run side by side, one
    /// process's turn per step (a nested worker's serves both its roles): in a nested tree, with
    /// up to 15 roles, each step takes its share of the time three roles would, so that each role
    /// keeps the pace it has in a small tree. (Without that, a worker's role acted about once every 22 ms of virtual time
    /// and applying a replay of 64 events took longer than its lease: it fenced itself, the
    /// parent declared it dead and replayed the events again, and no event was ever
    /// acknowledged.) A tree without nested workers keeps the clock it always had.
    private func tick() {
        let time = random.milliseconds(in: 0...2)
        now += nested ? time * 3 / roles : time
    }

    private func step() {
        count.steps += 1
        tick()
        injectFaults()
        advance()
        checkMemory()
        record()
    }

    private func quietStep() {
        count.steps += 1
        tick()
        for worker in workers {
            if let until = worker.pausedUntil, until > now { worker.pausedUntil = now }
        }
        advance()
        checkMemory()
        record()
    }

    /// Mixes this step's outcome into `trace`.
    private func record() {
        trace.mix(now - started)
        trace.mix(random.position)
        for connections in connectionsByParent {
            for connection in connections { trace.mix(connection.held) }
        }
        for number in [
            count.applied, count.droppedEventMessages, count.lostInputFences, count.rehandshakeFences, count.moves, count.handedOver,
            count.released, count.appliedByLeaves, count.nestedParents,
        ] { trace.mix(number) }
    }

    private func advance() {
        for slot in connectionsByParent.indices where !connectionsByParent[slot].isEmpty {
            var anyClosed = false
            for connection in connectionsByParent[slot] {
                guard !connection.isClosed else {
                    anyClosed = true
                    continue
                }
                let worker = connection.worker
                connection.deliver(at: now, toWorkerBlocked: toWorkerHeldUntil[worker] > now, toParentBlocked: toParentHeldUntil[worker] > now)
            }
            if anyClosed { connectionsByParent[slot].removeAll { $0.isClosed } }
        }
        for worker in workers {
            if let until = worker.pausedUntil, until <= now { worker.pausedUntil = nil }
            if let until = worker.downUntil, until <= now {
                worker.restart(incarnation: takeIncarnation(), connection: connect(worker: worker.index, at: now), at: now)
                // A nested worker's parent role starts again too, knowing nothing.
                if worker.nested != nil { worker.nested = makeNestedParent() }
                worker.start(at: now, in: self)
            }
        }
        let actor = random.int(in: 0...workers.count)
        if actor == workers.count {
            parent.step(at: now, connections: connectionsByParent[0], in: self)
        } else if workers[actor].isRunning {
            // A nested worker's process serves both roles in each turn, as the engine's loop
            // does in each iteration (its workers' messages, then its parent's).
            if let nested = workers[actor].nested {
                nested.step(at: now, connections: connectionsByParent[actor + 1], in: self)
            }
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
        let open = connectionsByParent.reduce(0) { $0 + $1.count }
        if open > 4 * workers.count + 4 { violation("\(open) connections open") }
        if parent.memory > 4 * workers.count { violation("the parent knows \(parent.memory) peers") }
        for worker in workers {
            if let nested = worker.nested, nested.memory > 4 * workers.count {
                violation("worker \(worker.index)'s parent role knows \(nested.memory) peers")
            }
        }
    }
}
