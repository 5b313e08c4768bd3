import Foundation
import Logging
import Synchronization
import Tracing
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The runtime that lets a workflow tree span processes: a `RuntimeLoop` whose thread also owns
/// the ZeroMQ sockets that talk to workers (as a parent) and to a parent (as a worker).
///
/// Run a host on it (`WorkflowHost(workflow:loop: runtime)`) and render children with
/// `child.remote(on:)`. One thread does both jobs, so a message from a worker reaches the tree
/// without a thread hop, and a render pass that waits for remote renderings blocks this thread,
/// never Swift's cooperative pool.
///
/// The runtime is also a `TaskExecutor`: a task that drives a host on it (sends updates and
/// awaits renderings, e.g. `WorkflowHost.updateAndAwaitRendering(workflow:)` in a loop) may run
/// on the loop thread itself, `Task(executorPreference: runtime) { … }` or
/// `withTaskExecutorPreference(runtime) { … }`. Its calls into the host then start on the loop
/// without a thread hand-off, and the rendering resumes it on the loop without waking a thread of
/// the cooperative pool: the two wake-ups a round trip pays between the task and the loop are
/// gone (the loop's sockets are confined to its thread, so the task's work cannot run on the
/// task's own thread instead). The task's code runs between the loop's jobs and holds the loop
/// meanwhile: keep what it does between its awaits short, and never block in it.
public final class RemoteRuntime: RuntimeLoop, TaskExecutor {
    private let jobs: RemoteJobQueue
    private let bound: LoopBound<RemoteEngine>
    private let shared: RuntimeSharedState
    /// The endpoint workers connect to, resolved (a `tcp://…:*` bind reports its port here).
    public let listenEndpoint: String?
    /// This process's name.
    public let name: String
    /// Where this process's spans go (`RemoteRuntimeConfiguration.tracer`); `nil`: tracing is off.
    /// The gateway and the root's sessions on this runtime trace with it too.
    public let tracer: (any Tracer)?

    /// Binds and/or connects as `configuration` says and starts the loop thread.
    /// Throws `RemoteRuntimeError` if an endpoint cannot be bound or connected.
    public convenience init(configuration: RemoteRuntimeConfiguration) throws {
        let sockets = try LoopSockets(configuration: configuration)
        self.init(configuration: configuration, transport: sockets, listenEndpoint: sockets.listenEndpoint, wakeup: sockets.wakeup)
        let jobs = self.jobs
        let bound = self.bound
        let thread = Thread {
            jobs.claimCurrentThread()
            bound.value.run()
            Self.endJobs(jobs, engine: bound)
        }
        thread.name = "workflow.remote.\(configuration.name)"
        thread.start()
    }

    /// A runtime whose loop the caller runs, one iteration at a time (`step()`), on the calling
    /// thread, over `transport` and on `clock`: the deterministic simulator runs a process's real
    /// drivers this way, several runtimes on its one thread. No thread is started; the caller's
    /// thread is the loop's from here on.
    convenience init(configuration: RemoteRuntimeConfiguration, steppedOver transport: any LoopTransport, clock: any LoopClock) throws {
        self.init(configuration: configuration, transport: transport, listenEndpoint: configuration.listenEndpoint, wakeup: try ZMQWakeup(), clock: clock)
        jobs.claimCurrentThread()
        bound.value.start()
    }

    private init(
        configuration: RemoteRuntimeConfiguration, transport: any LoopTransport, listenEndpoint: String?, wakeup: ZMQWakeup,
        clock: any LoopClock = MonotonicLoopClock()
    ) {
        name = configuration.name
        tracer = configuration.tracer
        let shared = RuntimeSharedState()
        self.shared = shared
        self.listenEndpoint = listenEndpoint
        let jobs = RemoteJobQueue(wakeup: wakeup)
        self.jobs = jobs
        let engine = RemoteEngine(configuration: configuration, sockets: transport, clock: clock, jobs: jobs, shared: shared)
        bound = LoopBound(engine, owner: jobs)
        engine.workerRole.runtime = self
    }

    /// One iteration of a stepped runtime's loop (`init(configuration:steppedOver:clock:)`);
    /// returns whether a stop was requested (then call `endSteps()`).
    func step() -> Bool {
        bound.value.iterate()
    }

    /// Ends a stepped runtime's loop: its shutdown begins (GOODBYE, STOPs), then its transport
    /// closes and it reads as stopped. As the threaded loop's end does, it runs what is still
    /// queued and every job queued later on the queueing thread: a queued job holds what it
    /// captured (a host, whose loop is this runtime), so a queue left standing would keep the
    /// runtime, and its wake-up pipe, alive for good.
    func endSteps() {
        bound.value.beginShutdown()
        bound.value.end()
        Self.endJobs(jobs, engine: bound)
    }

    /// After the loop's end, the jobs queued later run on the thread that queues them, against
    /// the engine as the shutdown left it (no workers, no parent, sockets closed). The queue holds
    /// the engine weakly: the engine holds the queue, so a strong reference would keep both, and
    /// the queue's wake-up pipe, for good (every runtime a process shut down stayed in memory).
    /// Once the runtime is gone, so is everyone a job could answer (each host holds its loop), and
    /// a job queued then is dropped.
    private static func endJobs(_ jobs: RemoteJobQueue, engine: LoopBound<RemoteEngine>) {
        jobs.end { [weak engine] job in engine?.value.perform(job) }
    }

    /// Begins a drain on a stepped runtime (from its loop's thread): `completion` runs with the
    /// outcome once the parent answered, the deadline passed or the drain was cut short.
    func beginDrain(deadline: Duration, completion: @escaping (DrainOutcome) -> Void) {
        bound.value.workerRole.beginDrain(deadline: deadline, completion: completion)
    }

    deinit {
        jobs.requestStop()
    }

    public func execute(_ job: @escaping @Sendable () -> Void) {
        jobs.append(job)
    }

    public var inLoop: Bool { jobs.isOwnerThread }

    /// Runs a job of a task that prefers this runtime as its executor on the loop thread, in line
    /// with the loop's other jobs (queued from the loop's own thread, as a task resumed by a
    /// rendering is, it costs no wake-up). Once the loop has ended, the job goes to the global
    /// concurrent executor: the task keeps running, off the loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if !jobs.append(task: unowned, on: asUnownedTaskExecutor()) {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
        }
    }

    public func settleRenderPass() -> Bool {
        bound.value.settle()
    }

    /// Settles a pass of the session tree `tree` (`SessionLoop.pathPrefix`) without holding the
    /// loop's thread: see `RuntimeLoop.settleRenderPass(resuming:)`.
    package func settleRenderPass(tree: String, resuming resume: @escaping @Sendable (Bool) -> Void) -> RenderPassSettling {
        bound.value.settle(tree: tree, resuming: resume)
    }

    /// The parent role's driver, for code already running on the loop (a remote child's node
    /// placing its child and passing its requests on).
    var parentRole: ParentDriver { bound.value.parentRole }

    /// What owns the loop's wake-up pipe and its queued jobs (its job queue), for a test that
    /// checks no runtime's loop outlives it.
    var loopLifetime: AnyObject { jobs }

    /// The worker role's driver, for code already running on the loop (the simulator reads
    /// what its machine holds, for its bound on memory).
    var workerRole: WorkerDriver { bound.value.workerRole }

    /// The status of every remote child this process is parent of, by node path: gathered from
    /// every tree's when asked (for an inspector or a test, not for a path taken per event).
    public var statuses: [String: RemoteChildStatus] { shared.statuses }

    /// The statuses of one tree's remote children (`tree`: a session's prefix,
    /// `SessionLoop.treePrefix(of:)`, or `""` for those outside every session), sorted by path,
    /// as the loop last published them: read without a job on the loop and without looking at
    /// other trees' children (a gateway reads them for every rendering message it sends).
    package func childStatuses(tree: String) -> [TreeChildStatus] {
        shared.statuses(ofTree: tree).sorted { $0.path < $1.path }
    }

    /// The trace context of the last traced flush this process applied as a parent and nobody
    /// took yet (forgotten here): the gateway's push of the next rendering continues that trace.
    /// Always `nil` without a tracer.
    package func takeTracedFlushContext() -> ServiceContext? {
        shared.takeTracedFlush()
    }

    /// Each change of a remote child's status, as it happens.
    public var statusChanges: AsyncStream<RemoteChildStatusChange> { shared.subscribe() }

    /// The workers connected to this process (as a parent), by name.
    public var workerNames: [String] { shared.workerNames }

    /// Waits until at least `count` workers have joined.
    public func waitForWorkers(count: Int) async {
        for await _ in shared.subscribeWorkers() where shared.workerNames.count >= count {
            return
        }
    }

    /// Whether this process (as a worker) has been welcomed by its parent.
    public var isWelcomed: Bool { shared.isWelcomed }

    /// The remote children and workers of this process's parent role as they are now, read on
    /// the loop thread; empty once the runtime has stopped. (A render pass waiting for workers
    /// delays the answer by at most the request deadline.)
    public func inspect() async -> RemoteRuntimeInspection {
        await inspect(tree: nil)
    }

    /// Like `inspect()`, with only the remote children of one tree: a session's, by its prefix
    /// (`SessionLoop.pathPrefix(scope:)`), or with `""` those outside every session (the shared
    /// root's). Its cost grows with that tree's children, not with every session's: a gateway
    /// inspects a session's tree for each rendering message it sends.
    public func inspect(tree prefix: String?) async -> RemoteRuntimeInspection {
        await withCheckedContinuation { (continuation: CheckedContinuation<RemoteRuntimeInspection, Never>) in
            let queued = jobs.appendUnlessStopping { [bound] in continuation.resume(returning: bound.value.inspect(tree: prefix)) }
            if !queued { continuation.resume(returning: RemoteRuntimeInspection(name: name, children: [], workers: [])) }
        }
    }

    /// What the loop's timers have done so far (`PeriodicWork`), read on the loop thread: what a
    /// test holds to a bound per check that does not grow with the children held.
    package func periodicWork() async -> PeriodicWork {
        await withCheckedContinuation { (continuation: CheckedContinuation<PeriodicWork, Never>) in
            let queued = jobs.appendUnlessStopping { [bound] in continuation.resume(returning: bound.value.takePeriodicWork()) }
            if !queued { continuation.resume(returning: PeriodicWork(checks: 0, visits: 0, mostVisitsInOneCheck: 0)) }
        }
    }

    /// Waits until the parent refuses this worker's HELLO (now or later) and returns why; `nil`
    /// when the runtime stops or the waiting task is cancelled first. The runtime itself keeps
    /// asking again with back-off; a daemon that would rather exit (so a supervisor or operator
    /// sees a name conflict) waits on this.
    public func refusal() async -> JoinRefusal? {
        for await refusal in shared.subscribeRefusals() { return refusal }
        return nil
    }

    /// Counters of what the worker side has done, for tests and operations.
    public var workerCounters: WorkerCounters { shared.counters }

    /// Hands this worker's children back to its parent before it leaves, so they move to other
    /// workers with their latest state instead of becoming unavailable (a planned handover; see
    /// docs/ARCHITECTURE.md, "Draining a worker").
    ///
    /// The worker sends DRAIN; the parent stops placing children here, asks each child for its
    /// final flush (RELEASE), places it again elsewhere and answers. The worker keeps serving
    /// meanwhile. Returns once the parent has answered, the `deadline` has passed, or there is no
    /// parent to hand over to; then call `shutdown()` (a runtime that has begun to drain is
    /// leaving: it no longer reconnects to a silent parent). Children not handed over move by the
    /// failover path (from their last acknowledged state, their unacknowledged events replayed).
    public func drain(deadline: Duration) async -> DrainOutcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<DrainOutcome, Never>) in
            let queued = jobs.appendUnlessStopping { [bound] in
                bound.value.workerRole.beginDrain(deadline: deadline) { continuation.resume(returning: $0) }
            }
            if !queued { continuation.resume(returning: DrainOutcome(ending: .interrupted, children: 0, handedOver: 0)) }
        }
    }

    /// Stops the remote children of the session trees `trees` (each a `SessionLoop.pathPrefix`)
    /// on their workers, leaving the trees' hosts as they are: for a process that ends those
    /// sessions without tearing each tree down (a coordinator stopping; its sessions' last
    /// checkpoints are committed). Their hosts may be freed at any time afterwards, also after
    /// `shutdown()`: their teardown then finds their children stopped already. Returns once the
    /// STOPs are sent (at once if the runtime is stopping: its shutdown stops every child).
    package func stopRemoteChildren(ofTrees trees: [String]) async {
        guard !trees.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = jobs.appendUnlessStopping { [bound] in
                bound.value.parentRole.stopChildren(ofTrees: trees)
                continuation.resume()
            }
            if !queued { continuation.resume() }
        }
    }

    /// Leaves the cluster in order: tells the parent (GOODBYE), stops hosted children, tells the
    /// workers to stop the children placed on them (STOP), closes the sockets and ends the loop
    /// thread. Waits until that is done. A `WorkflowHost` still running on this runtime keeps
    /// working afterwards on the threads that call it (its `stop()`, updates and sinks run there,
    /// one at a time), without workers: its remote children show as unavailable. Stop the hosts
    /// first for an orderly end: then the STOPs for their children go out with the loop's last
    /// iteration.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            jobs.append { [bound] in
                bound.value.beginShutdown()
                continuation.resume()
            }
        }
        jobs.requestStop()
        await shared.waitUntilStopped()
    }
}

/// A remote child's status changed.
public struct RemoteChildStatusChange: Sendable {
    /// The child's node path.
    public let path: String
    /// Its new status.
    public let status: RemoteChildStatus
}

/// What a worker did, counted.
public struct WorkerCounters: Sendable, Equatable {
    public var started = 0
    public var updated = 0
    public var stopped = 0
    public var events = 0
    public var droppedEvents = 0
    public var errors = 0
    /// Peers refused at the handshake (unlisted key, wrong server key): counted by a parent.
    public var refusedPeers = 0
    /// ZeroMQ messages read from the parent (a batch counts once, however many it carries).
    public var messagesFromParent = 0
    /// ZeroMQ messages sent to the parent (a batch counts once, however many it carries).
    public var messagesToParent = 0
}

/// Why a runtime could not start.
public enum RemoteRuntimeError: Error, CustomStringConvertible {
    /// An endpoint could not be bound or connected; `reason` says why in words.
    case endpoint(String, reason: String)
    /// A plaintext endpoint on a network address, without `allowPlaintextOnNetwork`.
    case insecureEndpoint(String)
    /// The endpoint to bind is taken by another socket (`EADDRINUSE`): another process, or an
    /// earlier instance still running, listens there.
    case addressInUse(String)
    /// The endpoint cannot work on this machine whatever else happens: malformed, an address that
    /// is not this machine's, an unknown transport. Only a change of configuration fixes it.
    case invalidEndpoint(String, reason: String)

    public var description: String {
        switch self {
        case .endpoint(let endpoint, let reason): "cannot use endpoint \(endpoint): \(reason)"
        case .insecureEndpoint(let endpoint):
            "refusing plaintext on the network address \(endpoint): configure CURVE keys, or allow plaintext explicitly"
        case .addressInUse(let endpoint): "\(endpoint) is already in use (another process listens there; stop it or choose another endpoint)"
        case .invalidEndpoint(let endpoint, let reason): "cannot use endpoint \(endpoint): \(reason)"
        }
    }

    /// Whether only a change of configuration can fix this (a daemon exits 78 on it).
    public var isConfigurationError: Bool {
        switch self {
        case .insecureEndpoint, .invalidEndpoint: true
        case .endpoint, .addressInUse: false
        }
    }

    /// The error for a failed bind or connect of `endpoint`, said in words rather than errno.
    static func failed(_ endpoint: String, binding: Bool, _ error: any Error) -> RemoteRuntimeError {
        guard let code = (error as? ZMQError)?.code else { return .endpoint(endpoint, reason: "\(error)") }
        switch code {
        case EADDRINUSE where binding: return .addressInUse(endpoint)
        case EINVAL: return .invalidEndpoint(endpoint, reason: "not a valid endpoint (tcp://HOST:PORT or ipc://PATH), or its host name does not resolve")
        case EADDRNOTAVAIL: return .invalidEndpoint(endpoint, reason: "the address is not one of this machine's")
        case ENODEV: return .invalidEndpoint(endpoint, reason: "no such network interface")
        case EPROTONOSUPPORT: return .invalidEndpoint(endpoint, reason: "unknown transport (use tcp:// or ipc://)")
        case EACCES: return .endpoint(endpoint, reason: "permission denied (a port below 1024, or an ipc path in a directory this user may not write)")
        case ENOENT: return .endpoint(endpoint, reason: "the ipc path's directory does not exist")
        default: return .endpoint(endpoint, reason: (error as? ZMQError)?.message ?? "\(error)")
        }
    }
}
