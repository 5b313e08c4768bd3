import Logging
import RemoteTestSupport
import Workflow
@testable import WorkflowRemote

/// A deterministic simulation of real runtimes: one parent process and its worker processes,
/// each a `RemoteRuntime` whose loop (`RemoteEngine`, with the real `ParentDriver` and
/// `WorkerDriver`) this simulation runs one iteration at a time, on one thread, over a simulated
/// network (`DriverNetwork`, `SimulatedTransport`) and a virtual clock (`VirtualClock`). Only the
/// wire and the time are simulated: HELLO, placement, START, batched EVENTs, OUTPUTS and their
/// acknowledgements, the parent's epoch fencing, the worker's lease and fence, drains and
/// handovers are the daemons' own code, hosting real workflows (`SimulationBoardWorkflow`'s
/// remote counters).
///
/// Each seed picks its fault mix (swarm testing): message delays, disconnects (what is in flight
/// is lost, the socket reconnects by itself), partitions, pauses (SIGSTOP, past the lease or
/// not), crashes and restarts, drains, garbage from a peer either way, and stale messages (what a
/// worker sent on a connection it no longer uses, sent again). A client sends events to the
/// counters throughout. The invariants, checked after every step:
/// - each child's outputs count 1, 2, 3, … (an event applied twice or lost breaks the run);
/// - a child never reports more events than the client's sink accepted;
/// - each action a worker's hosted child applies is applied within the worker's lease
///   (`LeaseWatch`);
/// - a child whose handover began (its parent sent RELEASE: a drain, a rebalance) is never failed
///   before it is placed again: whatever order its final flush and its worker's departure
///   arrive in, it moves on, never shown `workerUnavailable`;
/// - what each runtime's machines hold (the parent role's workers and per-child records, the
///   worker role's hosted children and pending flushes) stays within a bound set by the tree's
///   size, however long the run;
/// - once the faults end (`settle`), every accepted event is applied: each count reaches what was
///   sent, within a bound of steps (liveness);
/// - and, once the run finished (`finish()`), none of its runtimes or their loops is still alive
///   (the sweep checks each seed's before the next: each loop owns a wake-up pipe).
///
/// A run can switch one of the protocol's checks off (`ProtocolChecks`): the tests that do show
/// what each check keeps, as a pinned seed that then breaks an invariant.
final class DriverSimulation {
    typealias Instant = ContinuousClock.Instant

    /// Which faults a run injects, and how often (per step). Drawn from the seed: the model
    /// simulator's kinds (`SimulationFaultMix`, twice as frequent: a seed runs fewer steps here),
    /// and a peer's malformed and stale messages, the client's pace and the flushes' split.
    struct FaultMix: CustomStringConvertible {
        var common: SimulationFaultMix
        var malformed = 0.0
        var stale = 0.0
        /// How often the client sends an event.
        var events = 0.2
        /// The most outputs per OUTPUTS message: a larger flush is split (`continues`).
        var outputsPerMessage = PackedValues.maxOutputsPerMessage

        init(random: inout SimulationRandom) {
            common = SimulationFaultMix(random: &random, longDelays: 20...150, rarity: 2)
            malformed = random.rate(0.3, oneIn: 200...5_000)
            stale = random.rate(0.3, oneIn: 200...5_000)
            events = [0.05, 0.2, 0.5][random.int(in: 0...2)]
            if random.chance(0.5) { outputsPerMessage = random.int(in: 1...3) }
        }

        var description: String {
            "\(common), malformed \(malformed), stale \(stale), events \(events), outputs per message ≤ \(outputsPerMessage)"
        }
    }

    /// What a run did, for the test's report.
    struct Counts: CustomStringConvertible {
        var steps = 0
        var eventsAccepted = 0
        var eventsRefused = 0
        var disconnects = 0
        var pauses = 0
        var crashes = 0
        var partitions = 0
        var drains = 0
        var malformed = 0
        var stale = 0
        var messagesToWorkers = 0
        var messagesToParent = 0
        /// Events the nested children's counters applied (on a nested worker's own workers).
        var appliedThroughNestedWorkers = 0
        /// Actions whose lease the watch checked (by the workers' incarnations still running).
        var leaseChecks = 0
        /// Nested workers' processes that started again (a new parent role knowing nothing), and
        /// their workers that applied an event again after it (they rejoined the new process).
        var nestedRestarts = 0
        var rejoinsAfterNestedRestarts = 0
        /// Children whose handover began (a RELEASE sent), and the most any runtime's machines held.
        var handovers = 0
        var peakMemory = 0

        mutating func add(_ other: Counts) {
            steps += other.steps
            eventsAccepted += other.eventsAccepted
            eventsRefused += other.eventsRefused
            disconnects += other.disconnects
            pauses += other.pauses
            crashes += other.crashes
            partitions += other.partitions
            drains += other.drains
            malformed += other.malformed
            stale += other.stale
            messagesToWorkers += other.messagesToWorkers
            messagesToParent += other.messagesToParent
            appliedThroughNestedWorkers += other.appliedThroughNestedWorkers
            leaseChecks += other.leaseChecks
            nestedRestarts += other.nestedRestarts
            rejoinsAfterNestedRestarts += other.rejoinsAfterNestedRestarts
            handovers += other.handovers
            peakMemory = max(peakMemory, other.peakMemory)
        }

        var description: String {
            "\(steps) steps, \(eventsAccepted) events accepted (\(eventsRefused) refused), \(messagesToWorkers) messages to workers, "
                + "\(messagesToParent) to the parent; faults: \(disconnects) disconnects, \(pauses) pauses, \(crashes) crashes, "
                + "\(partitions) partitions, \(drains) drains, \(malformed) malformed and \(stale) stale messages; "
                + "\(appliedThroughNestedWorkers) events applied through nested workers, \(leaseChecks) actions checked against the lease, "
                + "\(nestedRestarts) nested workers started again and rejoined \(rejoinsAfterNestedRestarts) times, \(handovers) handovers; "
                + "at most \(peakMemory) entries in a runtime's machines"
        }
    }

    struct Violation: Error, CustomStringConvertible {
        let seed: UInt64
        let step: Int
        let message: String
        var description: String {
            "driver simulation, seed \(seed), step \(step): \(message)\n  replay: scripts/simulate.sh --seed \(seed) --suite DriverSimulationTests"
        }
    }

    /// A worker process: a stepped runtime, or none while it is down.
    final class WorkerProcess {
        let index: Int
        /// Whose worker it is: the top parent's (`DriverNetwork.topParent`) or a nested worker's.
        let parent: Int
        /// Whether it is a nested worker: workers of its own connect to it, and it hosts the
        /// top parent's `NestedWorkflow`s (pool "middle").
        let listens: Bool
        var runtime: RemoteRuntime?
        /// Its network while it is up (closed by a crash: nothing it would still send leaves).
        var transport: SimulatedTransport?
        var pausedUntil: Instant?
        var downUntil: Instant?
        /// Its drain ended: it shuts down at its next step.
        var leaving = false
        var draining = false
        /// The lease invariant of this incarnation (workers that are not nested workers).
        var leaseWatch: LeaseWatch?
        /// How many times its process started.
        var incarnations = 0
        /// Its parent, a nested worker, started again: the actions its lease watch had counted
        /// then, until it applies one more (it joined the new process).
        var rejoinBaseline: Int?
        /// The children of this process's parent role whose handover began (RELEASE sent), by
        /// child id: the placement's epoch and the node's path, until the child is placed again.
        var handovers: [UInt64: (epoch: UInt64, path: String)] = [:]

        init(index: Int, parent: Int, listens: Bool) {
            self.index = index
            self.parent = parent
            self.listens = listens
        }
    }

    static let interval = Duration.milliseconds(100)
    static let liveness = 4

    let seed: UInt64
    let clock = VirtualClock()
    let network: DriverNetwork
    let faults: FaultMix
    private(set) var count = Counts()
    private(set) var trace = SimulationTrace()
    let keys: [String]
    /// The keys of the children that are `NestedWorkflow`s (their counters run on a nested
    /// worker's own workers).
    let nestedKeys: [String]
    let parent: RemoteRuntime
    /// Every runtime the run started (the parent's and each worker incarnation's), held weakly:
    /// once the run finished (`finish()`) and is let go, none is still alive.
    private(set) var runtimes: [StartedRuntime] = []
    let host: WorkflowHost<SimulationBoardWorkflow>
    let workers: [WorkerProcess]
    /// Events the client's sinks accepted, per child.
    private(set) var sent: [String: Int] = [:]
    private var partitions: [(link: SimulatedLink, until: Instant)] = []
    private var faultsOn = true
    private var violations: [String] = []

    /// The protocol's checks the runtimes run with (all on, but in the tests of them).
    let checks: ProtocolChecks
    /// The children of the top parent whose handover began (see `WorkerProcess.handovers`).
    private var handovers: [UInt64: (epoch: UInt64, path: String)] = [:]

    /// Whether the seed's tree nests (`nested`): every other seed, the even ones.
    static func nests(_ seed: UInt64) -> Bool { seed % 2 == 0 }

    /// - Parameter nested: whether some workers are nested workers, each with one or two workers
    ///   of its own, and some of the top parent's children `NestedWorkflow`s placed on them.
    /// - Parameter checks: the protocol's checks every runtime runs with.
    init(seed: UInt64, nested: Bool? = nil, checks: ProtocolChecks = ProtocolChecks()) throws {
        self.seed = seed
        self.checks = checks
        var random = SimulationRandom(seed: seed)
        faults = FaultMix(random: &random)
        let nests = nested ?? Self.nests(seed)
        let topWorkers = random.int(in: 2...4)
        let nestedWorkers = nests ? random.int(in: 1...2) : 0
        var counters = (0..<random.int(in: 1...5)).map { "c\($0)" }
        nestedKeys = nests ? (0..<random.int(in: 1...2)).map { "n\($0)" } : []
        counters += nestedKeys
        keys = counters
        var processes = (0..<topWorkers).map { WorkerProcess(index: $0, parent: DriverNetwork.topParent, listens: $0 < nestedWorkers) }
        for middle in 0..<nestedWorkers {
            for _ in 0..<random.int(in: 1...2) {
                processes.append(WorkerProcess(index: processes.count, parent: middle, listens: false))
            }
        }
        workers = processes
        network = DriverNetwork(clock: clock, random: random, maxDelayMilliseconds: faults.common.maxDelayMilliseconds)
        parent = try RemoteRuntime(
            configuration: Self.configuration(process: DriverNetwork.topParent, parent: nil, listens: true, faults: faults, checks: checks),
            steppedOver: SimulatedTransport(network: network, process: DriverNetwork.topParent, parent: nil, listens: true), clock: clock)
        host = WorkflowHost(workflow: SimulationBoardWorkflow(keys: keys, nestedKeys: Set(nestedKeys)), loop: SessionLoop(runtime: parent, scope: "sim"))
        memoryBound = 8 * (keys.count + workers.count)
        runtimes.append(StartedRuntime(parent))
        for worker in workers { try start(worker) }
        network.waitInSettle = { [unowned self] process in wait(for: process) }
    }

    /// A runtime the run started, held weakly, with its loop (what owns its wake-up pipe, two
    /// descriptors): a runtime freed while its loop stays is leaked all the same.
    struct StartedRuntime {
        let name: String
        weak var runtime: RemoteRuntime?
        weak var loop: AnyObject?

        init(_ runtime: RemoteRuntime) {
            name = runtime.name
            self.runtime = runtime
            loop = runtime.loopLifetime
        }

        var isAlive: Bool { runtime != nil || loop != nil }
    }

    /// Whether some workers are nested workers.
    var nested: Bool { workers.contains { $0.listens } }

    /// The runtime configuration of `process` (`DriverNetwork.topParent` or a worker's index).
    static func configuration(process: Int, parent: Int?, listens: Bool, faults: FaultMix, checks: ProtocolChecks) -> RemoteRuntimeConfiguration {
        let name = process == DriverNetwork.topParent ? "parent" : "worker-\(process)"
        var configuration = RemoteRuntimeConfiguration(name: name, logger: Logger(label: "simulation", factory: { _ in SwiftLogNoOpLogHandler() }))
        if let parent {
            configuration.parentEndpoint = DriverNetwork.endpoint(of: parent)
            configuration.registry = remoteTestRegistry
        }
        if listens {
            configuration.listenEndpoint = DriverNetwork.endpoint(of: process)
            if parent != nil { configuration.pool = "middle" }
        }
        configuration.heartbeatInterval = interval
        configuration.heartbeatLiveness = liveness
        configuration.requestTimeout = interval * (liveness * 3)
        configuration.maxOutputsPerMessage = faults.outputsPerMessage
        configuration.protocolChecks = checks
        return configuration
    }

    private func start(_ worker: WorkerProcess) throws {
        let transport = SimulatedTransport(network: network, process: worker.index, parent: worker.parent, listens: worker.listens)
        var configuration = Self.configuration(process: worker.index, parent: worker.parent, listens: worker.listens, faults: faults, checks: checks)
        if !worker.listens {
            // Its hosted children apply only events from its parent: each within its lease.
            let watch = LeaseWatch(worker: worker.index, clock: clock, window: Self.interval * Self.liveness)
            transport.leaseWatch = watch
            configuration.hostedChildObservers = [watch]
            worker.leaseWatch = watch
        }
        let runtime = try RemoteRuntime(configuration: configuration, steppedOver: transport, clock: clock)
        worker.runtime = runtime
        worker.transport = transport
        runtimes.append(StartedRuntime(runtime))
        worker.downUntil = nil
        worker.pausedUntil = nil
        worker.leaving = false
        worker.draining = false
        worker.incarnations += 1
        if worker.rejoinBaseline != nil { worker.rejoinBaseline = 0 }
        guard worker.listens, worker.incarnations > 1 else { return }
        // A nested worker started again, its parent role knowing nothing: its workers are to
        // join it and apply events again.
        count.nestedRestarts += 1
        for leaf in workers where leaf.parent == worker.index {
            leaf.rejoinBaseline = leaf.runtime == nil ? 0 : leaf.leaseWatch?.actions ?? 0
        }
    }

    /// The process ended (crashed, or left after its drain): its memory and socket are gone.
    private func end(_ worker: WorkerProcess, orderly: Bool) {
        if !orderly {
            // A crash: nothing it would still send leaves.
            for link in network.links where link.worker == worker.index { link.close() }
        }
        release(worker, orderly: orderly)
        // Its parent role's memory is gone with it.
        worker.handovers.removeAll()
        let restart = clock.now + network.random.milliseconds(in: 50...600)
        worker.downUntil = restart
        // A nested worker's own workers lose their connections to it, and reconnect to the
        // process that starts again.
        if worker.listens { network.listenerEnded(worker.index, restartsAt: restart) }
    }

    /// Lets `worker`'s runtime go. A crashed process runs nothing more: its network is closed
    /// first and its lease watch counts nothing after, but its runtime still ends its loop, which
    /// lets go of its hosted children's hosts, its proxies and its queued jobs (each holds the
    /// runtime, whose wake-up pipe would stay open: a long run would run out of descriptors).
    private func release(_ worker: WorkerProcess, orderly: Bool) {
        if !orderly {
            worker.transport?.close()
            worker.leaseWatch?.processEnded()
        }
        worker.runtime?.endSteps()
        worker.runtime = nil
        worker.transport = nil
    }

    /// Ends the run: the client's host stops and every runtime ends its loop, so none outlives
    /// the run (`runtimes`). Call once the run's results are read; it takes no step.
    func finish() {
        for worker in workers where worker.runtime != nil { release(worker, orderly: false) }
        host.stopOnLoop()
        parent.endSteps()
    }

    // MARK: Running

    func run(steps: Int) -> Violation? {
        for _ in 0..<steps {
            step()
            if let message = violations.first { return Violation(seed: seed, step: count.steps, message: message) }
        }
        return nil
    }

    /// Ends every fault, stops the client and runs until every accepted event is applied (or
    /// `limit` steps passed: then the run is stuck, a violation of liveness).
    func settle(limit: Int) -> Violation? {
        faultsOn = false
        for (link, _) in partitions {
            link.toParentBlocked = false
            link.toWorkerBlocked = false
        }
        partitions.removeAll()
        for quiet in 0..<limit {
            step()
            if let message = violations.first { return Violation(seed: seed, step: count.steps, message: message) }
            if quiet > 500, isSettled { return nil }
        }
        let rendering = host.rendering
        let counts = keys.map { "\($0): \(rendering.seen[$0] ?? 0) of \(sent[$0] ?? 0)" }.joined(separator: ", ")
        return Violation(seed: seed, step: count.steps, message: "no progress: events accepted and never applied after \(limit) fault-free steps (\(counts))")
    }

    var isSettled: Bool {
        let seen = host.rendering.seen
        return keys.allSatisfy { seen[$0, default: 0] == sent[$0, default: 0] }
    }

    /// Virtual time since the run began.
    var elapsed: Duration { clock.elapsed }

    private func step() {
        advance()
        let now = clock.now
        healPartitions(at: now)
        if faultsOn { injectFaults(at: now) }
        if faultsOn, network.random.chance(faults.events) { sendEvent() }
        runOne()
    }

    /// Moves the clock on by 0–3 ms and the network with it.
    private func advance() {
        count.steps += 1
        clock.advance(by: .microseconds(network.random.int(in: 0...3_000)))
        network.advance()
    }

    /// Processes whose loop waits in a render pass's settle (`wait(for:upTo:)`): not stepped
    /// until their wait returns.
    private var blocked: Set<Int> = []

    /// Runs one loop iteration of one process (the parent, or a worker that is up and neither
    /// stopped nor blocked), then checks the invariants and extends the trace.
    private func runOne() {
        let now = clock.now
        let choice = network.random.int(in: 0...workers.count)
        var stepped = -1
        if choice == workers.count {
            if !blocked.contains(DriverNetwork.topParent) {
                _ = parent.step()
                stepped = workers.count
            }
        } else if !blocked.contains(choice) {
            let worker = workers[choice]
            if let downUntil = worker.downUntil {
                if now >= downUntil {
                    do { try start(worker) } catch { violations.append("worker \(choice) cannot start again: \(error)") }
                }
            } else if let pausedUntil = worker.pausedUntil, now < pausedUntil, faultsOn {
                // Stopped (SIGSTOP): nothing runs.
            } else if worker.leaving {
                end(worker, orderly: true)
            } else if let runtime = worker.runtime {
                worker.pausedUntil = nil
                _ = runtime.step()
                stepped = choice
            }
        }
        check()
        trace.mix(now - clock.origin)
        trace.mix(stepped)
        trace.mix(network.random.position)
        trace.mix(network.messagesHeld)
        trace.mix(network.count.messagesToWorkers)
        trace.mix(network.count.messagesToParent)
    }

    /// `process`'s loop waits in a render pass's settle (a nested worker's hosted child renders
    /// its own remote child; `RemoteEngine.settle()` polls only the workers' socket until the
    /// renderings come): the rest of the world runs one step meanwhile, as the other processes
    /// run while this one's thread waits.
    func wait(for process: Int) {
        blocked.insert(process)
        advance()
        runOne()
        blocked.remove(process)
    }

    private func sendEvent() {
        let key = keys[network.random.int(in: 0...(keys.count - 1))]
        guard let screen = host.rendering.screens[key] else { return }
        if screen.onIncrement.send(1) {
            sent[key, default: 0] += 1
            count.eventsAccepted += 1
        } else {
            count.eventsRefused += 1
        }
    }

    private func check() {
        for worker in workers {
            if let watch = worker.leaseWatch { violations += watch.takeViolations() }
            if let baseline = worker.rejoinBaseline, worker.runtime != nil, let watch = worker.leaseWatch, watch.actions > baseline {
                worker.rejoinBaseline = nil
                count.rejoinsAfterNestedRestarts += 1
            }
        }
        checkHandovers()
        if count.steps % Self.memoryCheckInterval == 0 { checkMemory() }
        let rendering = host.rendering
        if let first = rendering.violations.first { violations.append(first) }
        for key in keys where rendering.seen[key, default: 0] > sent[key, default: 0] {
            violations.append("child \(key): \(rendering.seen[key, default: 0]) events applied, \(sent[key, default: 0]) accepted")
        }
    }

    /// How often (in steps) the machines' memory is measured.
    static let memoryCheckInterval = 16
    /// The most entries a runtime's machines may hold: a few per worker and per child of the
    /// tree, whatever the run's length (set from the tree's size).
    private let memoryBound: Int

    /// The bound on memory: what each runtime's machines hold (its parent role's workers, their
    /// peers and per-child records; its worker role's hosted children and pending flushes)
    /// stays within a few entries per worker and child of the tree. A table that kept what a
    /// worker's departure, a moved child or a fenced placement left behind would grow with the
    /// run's faults and break it.
    private func checkMemory() {
        func measure(_ runtime: RemoteRuntime, _ name: String) {
            let parentRole = runtime.parentRole.parent.memory + runtime.parentRole.workers.count
            let workerRole = runtime.workerRole.worker.memory
            count.peakMemory = max(count.peakMemory, parentRole, workerRole)
            if parentRole > memoryBound { violations.append("\(name)'s parent role holds \(parentRole) entries (bound \(memoryBound))") }
            if workerRole > memoryBound { violations.append("\(name)'s worker role holds \(workerRole) entries (bound \(memoryBound))") }
        }
        measure(parent, "the parent")
        for worker in workers {
            if let runtime = worker.runtime { measure(runtime, "worker \(worker.index)") }
        }
    }

    /// A child whose handover began (RELEASE sent by its parent, `DriverNetwork.releases`) is
    /// never failed until it is placed again (a new epoch): it moves on from its final flush,
    /// or, if its worker went first, from its last acknowledged state, never shown unavailable.
    private func checkHandovers() {
        for release in network.takeReleases() {
            count.handovers += 1
            let record = (epoch: release.epoch, path: release.path)
            if release.parent == DriverNetwork.topParent {
                handovers[release.childID] = record
            } else {
                workers[release.parent].handovers[release.childID] = record
            }
        }
        if !handovers.isEmpty { checkHandovers(&handovers, of: parent, name: "the parent") }
        for worker in workers where !worker.handovers.isEmpty {
            guard let runtime = worker.runtime else { continue }
            checkHandovers(&worker.handovers, of: runtime, name: "worker \(worker.index)")
        }
    }

    private func checkHandovers(_ handovers: inout [UInt64: (epoch: UInt64, path: String)], of runtime: RemoteRuntime, name: String) {
        let statuses = runtime.statuses
        for (childID, handover) in handovers {
            guard runtime.parentRole.parent.epoch(of: childID) == handover.epoch else {
                handovers[childID] = nil
                continue
            }
            if case .unavailable(let error) = statuses[handover.path], case .workerUnavailable = error {
                violations.append("\(name): child \(handover.path) failed during its handover (epoch \(handover.epoch)): \(error)")
                handovers[childID] = nil
            }
        }
    }

    // MARK: Faults

    private func injectFaults(at now: Instant) {
        let links = network.links
        guard !links.isEmpty else { return }
        let link = links[network.random.int(in: 0...(links.count - 1))]
        if network.random.chance(faults.common.disconnect) {
            count.disconnects += 1
            link.disconnect(reconnectAt: now + network.random.milliseconds(in: 10...400))
        }
        if network.random.chance(faults.common.partition) {
            count.partitions += 1
            let oneWay = network.random.int(in: 0...2)
            if oneWay != 1 { link.toParentBlocked = true }
            if oneWay != 2 { link.toWorkerBlocked = true }
            partitions.append((link, now + network.random.milliseconds(in: 50...1_500)))
        }
        if network.random.chance(faults.malformed) {
            count.malformed += 1
            let frames = (0..<network.random.int(in: 1...4)).map { _ in
                (0..<network.random.int(in: 0...40)).map { _ in UInt8(truncatingIfNeeded: network.random.next()) }
            }
            if network.random.chance(0.5) { link.arrivedAtParent.append(frames) } else { link.arrivedAtWorker.append(frames) }
        }
        if network.random.chance(faults.stale), let old = network.oldMessages[link.worker], !old.isEmpty {
            count.stale += 1
            link.arrivedAtParent.append(old[network.random.int(in: 0...(old.count - 1))])
        }
        let worker = workers[network.random.int(in: 0...(workers.count - 1))]
        guard worker.runtime != nil, worker.downUntil == nil else { return }
        if network.random.chance(faults.common.pause) {
            count.pauses += 1
            worker.pausedUntil = now + network.random.milliseconds(in: 20...1_500)
        }
        if network.random.chance(faults.common.crash) {
            count.crashes += 1
            end(worker, orderly: false)
        } else if network.random.chance(faults.common.drain), !worker.draining {
            count.drains += 1
            worker.draining = true
            worker.runtime?.beginDrain(deadline: .seconds(2)) { [weak worker] _ in worker?.leaving = true }
        }
    }

    private func healPartitions(at now: Instant) {
        partitions.removeAll { partition in
            guard partition.until <= now else { return false }
            partition.link.toParentBlocked = false
            partition.link.toWorkerBlocked = false
            return true
        }
    }

    /// What the network counted, with the run's counts.
    var totals: Counts {
        var totals = count
        totals.messagesToWorkers = network.count.messagesToWorkers
        totals.messagesToParent = network.count.messagesToParent
        let seen = host.rendering.seen
        totals.appliedThroughNestedWorkers = nestedKeys.reduce(0) { $0 + seen[$1, default: 0] }
        totals.leaseChecks = workers.reduce(0) { $0 + ($1.leaseWatch?.actions ?? 0) }
        return totals
    }
}
