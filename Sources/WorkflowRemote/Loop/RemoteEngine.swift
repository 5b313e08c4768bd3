import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The remote runtime's loop, confined to its thread: it polls the sockets, runs the queued jobs
/// and the timers, and hands each socket's messages to the driver of the role it serves.
///
/// The protocol is in two state machines without I/O (`ParentStateMachine`,
/// `WorkerStateMachine`), each fed by its role's driver (`ParentDriver`, `WorkerDriver`), which
/// performs what the machine decides. This loop owns neither role's state: it composes them, so
/// a process that is both (a worker whose hosted children have remote children of their own)
/// serves both in every iteration.
final class RemoteEngine {
    /// What the loop shares with its two drivers: its configuration, sockets, job queue, shared
    /// state and metrics among them.
    let resources: LoopResources
    /// The parent role: the remote children this process places on workers.
    let parentRole: ParentDriver
    /// The worker role: the children this process hosts for its parent.
    let workerRole: WorkerDriver
    /// The jobs the loop runs in this iteration (its storage is swapped with the queue's).
    var jobBatch: [RemoteJob] = []
    /// When `runTimers` next looks at the heartbeats and gauges.
    var nextTimerCheck: ContinuousClock.Instant
    /// When the loop last looked at its sockets (the poll that began this iteration, or one of
    /// a settling pass's): what the workers sent after it is unread, so their silence is counted
    /// up to it (`ParentStateMachine.livenessAction(of:at:listenedUntil:)`).
    var lastPolled: ContinuousClock.Instant
    /// How many times `runTimers` has looked (`RemoteRuntime.periodicWork()`).
    var timerChecks = 0
    /// The most children and workers one timer check looked at since `periodicWork()` last asked.
    var mostVisitsInOneCheck = 0

    /// - Parameters:
    ///   - sockets: the network (`LoopSockets` in a process; the simulator's own in its tests).
    ///   - clock: where deadlines, leases and heartbeats read the time.
    init(
        configuration: RemoteRuntimeConfiguration, sockets: any LoopTransport, clock: any LoopClock = MonotonicLoopClock(), jobs: RemoteJobQueue,
        shared: RuntimeSharedState
    ) {
        resources = LoopResources(
            configuration: configuration, codec: BinaryWireCodec(), sockets: sockets, clock: clock, jobs: jobs, shared: shared,
            metrics: RemoteRuntimeMetrics(node: configuration.name, factory: configuration.metricsFactory), codingScratch: WireCodingScratch())
        nextTimerCheck = clock.now
        lastPolled = clock.now
        parentRole = ParentDriver(resources: resources)
        workerRole = WorkerDriver(resources: resources, parentRole: parentRole)
    }

    // MARK: The loop

    /// Runs the loop until a stop is requested, then ends it (`end()`).
    func run() {
        start()
        while !iterate() {}
        end()
    }

    /// What the loop does once, before its first iteration: a worker says HELLO.
    func start() {
        if resources.sockets.hasUpstream { workerRole.sendHello() }
    }

    /// One iteration of the loop: waits for the transport (or not at all, with jobs queued),
    /// then serves both roles once. Returns whether a stop was requested (the shutdown has
    /// begun; `end()` follows). The simulator calls it step by step.
    func iterate() -> Bool {
        let ready = resources.sockets.poll(timeout: pollTimeout())
        lastPolled = resources.clock.now
        // First, before any queued input is touched (this thread may just have woken from
        // SIGSTOP or a long stall): a worker its parent may have declared dead stops hosting.
        workerRole.fenceIfCutOffFromParent()
        let stopRequested = runQueuedJobs()
        // A fence held while a job's hosted pass settled, before the parent's input is read.
        workerRole.performHeldFences()
        if ready.security { serviceSecurity() }
        if ready.listener { parentRole.drainListener() }
        parentRole.serviceAcknowledgementWaits()
        if ready.upstream { workerRole.drainUpstream() }
        workerRole.answerDeferredReleases()
        workerRole.flushHosted()
        runTimers()
        parentRole.sendHeld()
        if stopRequested, !workerRole.isShuttingDown { beginShutdown() }
        return stopRequested
    }

    /// How long the next poll may wait: not at all with jobs queued, else a heartbeat interval,
    /// or less when a session's capture waits for acknowledgements until an earlier deadline.
    private func pollTimeout() -> Duration {
        if resources.jobs.hasJobs { return .zero }
        let interval = resources.configuration.heartbeatInterval
        guard let deadline = parentRole.acknowledgementWaits.earliestDeadline else { return interval }
        return max(.zero, min(interval, deadline - resources.clock.now))
    }

    /// Ends the loop: the transport closes, the parent role's proxies learn it, and the runtime
    /// reads as stopped.
    func end() {
        resources.sockets.close()
        parentRole.loopEnded()
        resources.shared.markStopped()
    }

    /// How many more times an iteration takes the jobs queued while its jobs ran, before it
    /// looks at the sockets again (`runQueuedJobs`).
    static let chainedJobRounds = 3

    /// Runs the queued jobs, then, a few times over, the jobs they queued (a task running on the
    /// loop, `RemoteRuntime.enqueue`, queues the host's drain with its update; the rendering that
    /// answers it queues the task's continuation): each round saved is a poll of every socket,
    /// several system calls, on the round trip's path. Bounded, so jobs that keep queueing jobs
    /// cannot keep the sockets waiting. Returns whether a stop was requested.
    private func runQueuedJobs() -> Bool {
        var stopRequested = false
        var round = 0
        repeat {
            stopRequested = resources.jobs.takeAll(into: &jobBatch) || stopRequested
            for job in jobBatch {
                // As at the top of an iteration, and before each job: a job may have run long (a
                // render pass settling), this thread may have been stopped between two, and a job
                // may apply a hosted child's action (a worker's result): a worker its parent may
                // have declared dead since must not touch what is queued.
                workerRole.fenceIfCutOffFromParent()
                perform(job)
            }
            jobBatch.removeAll(keepingCapacity: true)
            round += 1
        } while round <= Self.chainedJobRounds && !stopRequested && resources.jobs.hasJobs
        return stopRequested
    }

    /// Runs one queued job: on the loop, or after its end on the thread that queued it.
    func perform(_ job: RemoteJob) {
        switch job {
        case .run(let run): run()
        case .event(let event): parentRole.sendEvent(event)
        case .tracedEvent(let event, let context): parentRole.sendEvent(event, context: context)
        case .task(let job, let executor): job.runSynchronously(on: executor)
        }
    }

    /// Waits (on this thread) until every START/UPDATE sent by the last render pass has its
    /// rendering, or the request deadline passes. Returns whether any arrived.
    func settle() -> Bool {
        // The pass settling is a hosted child's, inside its host's lock: the worker role stops
        // no hosted child until it is over (`WorkerDriver.holdsFences`).
        let outermost = !workerRole.holdsFences
        workerRole.holdsFences = true
        defer { if outermost { workerRole.holdsFences = false } }
        parentRole.settleChanged = false
        // What the pass asked of the workers leaves now, one batch per worker.
        parentRole.sendHeld()
        let deadline = resources.clock.now + resources.configuration.requestTimeout
        while parentRole.settles.hasUnclaimed {
            let now = resources.clock.now
            if now >= deadline {
                parentRole.abandonAwaited()
                return true
            }
            let ready = resources.sockets.poll(timeout: min(deadline - now, .milliseconds(50)), listenerOnly: true)
            lastPolled = resources.clock.now
            if ready.security { serviceSecurity() }
            if ready.listener { parentRole.drainListener() }
            runTimers()
        }
        // Hosted children's renderings are flushed by the loop once this pass is over: taking
        // their snapshots here could re-enter the host that is settling.
        return parentRole.settleChanged
    }

    /// Settles a pass of the session tree `tree` without holding the loop: what the pass asked
    /// of the workers leaves now; if it awaits renderings, `resume` runs as a loop job once they
    /// all came (or the request deadline passed), and the loop serves other jobs meanwhile.
    func settle(tree: String, resuming resume: @escaping @Sendable (Bool) -> Void) -> RenderPassSettling {
        parentRole.sendHeld()
        let jobs = resources.jobs
        let deadline = resources.clock.now + resources.configuration.requestTimeout
        let pending = parentRole.settles.claim(tree: tree, deadline: deadline) { changed in jobs.append { resume(changed) } }
        return pending ? .pending : .settled(changed: false)
    }

    func beginShutdown() {
        guard !workerRole.isShuttingDown else { return }
        workerRole.shutDown()
        parentRole.stopChildrenOnWorkers()
    }

    /// Answers the ZAP handler and reads both sockets' monitors: the workers' socket's refusals
    /// for the parent role, the parent's connection's events for the worker role.
    func serviceSecurity() {
        let (refused, failedHandshakes) = resources.sockets.serviceSecurity()
        parentRole.peersRefused(refused, failedHandshakes: failedHandshakes)
        for event in resources.sockets.upstreamConnectionEvents() { workerRole.handleUpstreamConnection(event) }
    }

    // MARK: Timers

    /// Heartbeats both ways: each side sends one on a link it has otherwise left idle for an
    /// interval, and any message counts as a sign of life. A worker silent for
    /// `interval × liveness` is dead to its parent; a parent silent that long makes the worker
    /// reconnect on a fresh socket and say HELLO again, backing off exponentially.
    func runTimers() {
        let now = resources.clock.now
        workerRole.checkDrainDeadline(at: now)
        parentRole.checkPlacementGrace(at: now)
        // At most ten times per interval: a busy loop iterates far more often than that. What the
        // checks below look at is bounded by the workers and what changed (events awaiting an
        // acknowledgement, a rebalance sweep's slice), never by the children held.
        guard now >= nextTimerCheck else { return }
        nextTimerCheck = now + resources.configuration.heartbeatInterval / 10
        timerChecks += 1
        let visitsBefore = parentRole.periodicVisits
        parentRole.reportSuppressedWarnings()
        workerRole.reportSuppressedWarnings()
        updateGauges()
        parentRole.rebalance(now: now, shuttingDown: workerRole.isShuttingDown)
        parentRole.abandonExpiredSettles(now: now)
        workerRole.tick(at: now)
        parentRole.performLiveness(at: now, listenedUntil: lastPolled)
        mostVisitsInOneCheck = max(mostVisitsInOneCheck, parentRole.periodicVisits - visitsBefore)
    }

    /// What the timers have done (`RemoteRuntime.periodicWork()`); the most in one check is
    /// counted afresh from here.
    func takePeriodicWork() -> PeriodicWork {
        defer { mostVisitsInOneCheck = 0 }
        return PeriodicWork(checks: timerChecks, visits: parentRole.periodicVisits, mostVisitsInOneCheck: mostVisitsInOneCheck)
    }

    /// Sets the gauges that are sums over both roles' tables.
    func updateGauges() {
        parentRole.updateGauges()
        resources.metrics.childrenHosted.set(workerRole.worker.hosting.children.count)
    }

    /// The parent role's children (with `tree`, only that tree's) and workers as they are now;
    /// the whole picture also brings the gauges up to date.
    func inspect(tree: String?) -> RemoteRuntimeInspection {
        if tree == nil { updateGauges() }
        return parentRole.inspect(tree: tree)
    }
}
