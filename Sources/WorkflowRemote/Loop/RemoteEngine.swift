import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The remote runtime's state machine, confined to its loop thread.
///
/// As a parent it places remote children on workers, sends START/UPDATE/STOP/EVENT and routes
/// RENDERING/OUTPUTS/ERROR back to the children's proxies. As a worker it hosts children for its
/// parent and forwards their renderings and outputs. Every message from a peer is checked; a bad
/// one is logged (and answered with ERROR where the protocol allows) and never stops the loop.
final class RemoteEngine {
    let configuration: RemoteRuntimeConfiguration
    let codec: any WireCodec
    let logger: Logger
    let sockets: LoopSockets
    let jobs: RemoteJobQueue
    let shared: RuntimeSharedState
    /// The runtime this engine drives; set by `RemoteRuntime` right after creating the engine.
    weak var runtime: RemoteRuntime?

    // Parent role.
    var workers: [WorkerID: WorkerPeer] = [:]
    var proxies: [UInt64: any AnyRemoteChildProxy] = [:]
    /// The proxies of each tree (`SessionLoop.treePrefix(of:)`), so one session's inspection
    /// reads its own children, not every session's.
    var proxiesByTree: [String: Set<UInt64>] = [:]
    /// Each remote child's forwarding prefix → its proxy (`forwardingRoute(for:)`).
    var forwardingRoutes: [String: UInt64] = [:]
    var awaiting: Set<UInt64> = []
    /// The parent role's protocol state and decisions about its workers (`ParentStateMachine`):
    /// who joined, who is alive, which children each hosts and hands over. The parent driver
    /// (`RemoteEngine+ParentDriver.swift` and the parent's extensions) feeds it and performs what
    /// it decides.
    var parent: ParentStateMachine
    var nextChildID: UInt64 = 1
    /// How children placed in pools pick their worker (`placementChoice(for:withinGrace:)`).
    let poolPlacement: PoolPlacement
    /// Until when a child placed in a pool waits for the pool's configured workers to join.
    let placementGraceEnds: ContinuousClock.Instant
    /// Whether a child waited for the grace: when it ends, every unplaced child is tried again.
    var childrenWaitForGrace = false
    /// Whether the timers saw the grace end (and logged it, when there was one).
    var placementGraceIsOver = false
    /// Children whose handover a rebalance began (not a drain): their next START is a move.
    var rebalancing: Set<UInt64> = []
    /// When the next rebalance plan is made (once per heartbeat interval: a plan walks every child).
    var nextRebalance = ContinuousClock.now
    var settleChanged = false
    /// The jobs the loop runs in this iteration (its storage is swapped with the queue's).
    var jobBatch: [RemoteJob] = []
    /// Children with events recorded in this loop iteration and not sent yet (`sendDueEvents`).
    var childrenWithEventsDue: [UInt64] = []
    /// Workers whose outbox (`WorkerPeer.outbox`) holds messages, sent at the end of the pass or
    /// loop iteration (`sendHeld`).
    var workersWithHeld: [WorkerPeer] = []
    /// Workers an early batch (`sendClosedBatches(of:)`) found gone, removed by the next
    /// `sendHeld`.
    var workersUnreachableEarly: [WorkerPeer] = []
    /// Where a message sent at once is assembled (its storage reused from one to the next).
    var immediateOutbox = Outbox()
    /// The message the loop received last, in storage reused for the next one.
    var receivedFrames = ZMQFrameBuffer()
    /// That message decoded, its payload array and node path reused for the next one.
    var receivedEnvelope = Envelope(kind: .heartbeat)
    /// The coder storage the loop's encodes and decodes of props, renderings and outputs reuse.
    let codingScratch = WireCodingScratch()
    var isDrainingAfterSendFailure = false
    /// Bounds the warnings peers' traffic causes (and the ERROR replies that go with them).
    var peerWarnings = LogRateLimiter()
    /// What the inspector and the metrics see (`RemoteEngine+Inspection.swift`).
    let metrics: RemoteRuntimeMetrics
    var inspection = InspectionCounters()

    // Worker role.
    /// The worker role's protocol state and decisions (`WorkerStateMachine`); the worker driver
    /// (`RemoteEngine+WorkerDriver.swift`) feeds it and performs what it decides.
    var worker: WorkerStateMachine<any AnyHostedChild>
    /// After how many events a slice of the parent's messages ends and the loop flushes their
    /// outputs (`drainUpstream`): enough to spread a flush's fixed costs (a render, a snapshot, a
    /// message) thin, few enough that the parent works on one flush while this worker makes the
    /// next.
    static let eventsPerSlice = 256
    /// Where every message to the parent is assembled: sent at once, or, while `flushHosted`
    /// runs, held and sent batched at its end. Its storage is reused from one send to the next.
    var upstreamOutbox = Outbox()
    /// Set while `flushHosted` runs: `sendUpstream` then appends to `upstreamOutbox`.
    var holdingUpstream = false
    /// The lists `flushHosted` walks, their storage reused from one flush to the next.
    var childrenToRender: [UInt64] = []
    var childrenToFlush: [UInt64] = []
    /// Who waits for the outcome of the drain in progress (each `RemoteRuntime.drain` call).
    var drainCompletions: [(DrainOutcome) -> Void] = []
    /// Whether the runtime is stopping (no lease, no heartbeats, no rebalancing any more).
    var shuttingDown: Bool { worker.isShuttingDown }
    /// When `runTimers` next looks at the heartbeats and gauges.
    var nextTimerCheck = ContinuousClock.now
    /// This runtime's identity in HELLO: the same across its reconnections, unique per process.
    let instance = UUID().uuidString

    init(configuration: RemoteRuntimeConfiguration, sockets: LoopSockets, jobs: RemoteJobQueue, shared: RuntimeSharedState) {
        poolPlacement = PoolPlacement(configuredMembers: configuration.poolMembers)
        placementGraceEnds = .now + configuration.placementGrace
        self.configuration = configuration
        self.codec = BinaryWireCodec()
        self.logger = configuration.logger
        self.sockets = sockets
        self.jobs = jobs
        self.shared = shared
        self.metrics = RemoteRuntimeMetrics(node: configuration.name, factory: configuration.metricsFactory)
        self.parent = ParentStateMachine(
            configuration: .init(
                heartbeatInterval: configuration.heartbeatInterval, heartbeatLiveness: configuration.heartbeatLiveness,
                acknowledgementDeadline: configuration.requestTimeout))
        self.worker = WorkerStateMachine(
            configuration: .init(
                heartbeatInterval: configuration.heartbeatInterval, heartbeatLiveness: configuration.heartbeatLiveness,
                capacity: configuration.capacity, hasParent: sockets.hasUpstream, parentEndpoints: sockets.parentEndpointCount),
            now: .now)
    }

    // MARK: The loop

    func run() {
        if sockets.hasUpstream { sendHello() }
        while true {
            let ready = sockets.poll(timeout: jobs.hasJobs ? .zero : nextTimeout())
            // First, before any queued input is touched (this thread may just have woken from
            // SIGSTOP or a long stall): a worker its parent may have declared dead stops hosting.
            fenceIfCutOffFromParent()
            let stopRequested = runQueuedJobs()
            if ready.security { serviceSecurity() }
            if ready.listener { drainListener() }
            if ready.upstream { drainUpstream() }
            answerDeferredReleases()
            flushHosted()
            runTimers()
            sendHeld()
            if stopRequested {
                if !shuttingDown { beginShutdown() }
                break
            }
        }
        sockets.close()
        // What a job may still ask of the engine after the end (a host stopped or updated late)
        // finds nobody to send to, and the children placed on workers say so.
        for (_, peer) in workers {
            for id in parent.workers[peer.id]?.children ?? [] {
                proxies[id]?.fail(.workerUnavailable(worker: peer.name, reason: "is out of reach: this process's remote runtime has shut down"))
            }
        }
        workers.removeAll()
        workersWithHeld.removeAll()
        awaiting.removeAll()
        shared.markStopped()
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
            stopRequested = jobs.takeAll(into: &jobBatch) || stopRequested
            for job in jobBatch {
                // As at the top of an iteration, and before each job: a job may have run long (a
                // render pass settling), this thread may have been stopped between two, and a job
                // may apply a hosted child's action (a worker's result): a worker its parent may
                // have declared dead since must not touch what is queued.
                fenceIfCutOffFromParent()
                perform(job)
            }
            jobBatch.removeAll(keepingCapacity: true)
            round += 1
        } while round <= Self.chainedJobRounds && !stopRequested && jobs.hasJobs
        return stopRequested
    }

    /// Runs one queued job: on the loop, or after its end on the thread that queued it.
    func perform(_ job: RemoteJob) {
        switch job {
        case .run(let run): run()
        case .event(let event): sendEvent(event)
        case .task(let job, let executor): job.runSynchronously(on: executor)
        }
    }

    /// Waits (on this thread) until every START/UPDATE sent by the last render pass has its
    /// rendering, or the request deadline passes. Returns whether any arrived.
    func settle() -> Bool {
        settleChanged = false
        // What the pass asked of the workers leaves now, one batch per worker.
        sendHeld()
        let deadline = ContinuousClock.now + configuration.requestTimeout
        while !awaiting.isEmpty {
            let now = ContinuousClock.now
            if now >= deadline {
                for id in awaiting {
                    guard let proxy = proxies[id] else { continue }
                    let worker = proxy.worker?.name ?? "?"
                    logger.warning("no rendering within the request deadline", metadata: ["path": "\(proxy.path)", "worker": "\(worker)"])
                    // The child will be placed again: its copy on this worker must not live on.
                    if let peer = proxy.worker {
                        unplace(id, from: peer)
                        sendToWorker(peer.id, kind: .stop, correlationID: id, epoch: parent.epoch(of: id), nodePath: proxy.path, payloads: [])
                    }
                    proxy.fail(.workerUnavailable(worker: worker, reason: "did not answer within \(configuration.requestTimeout.secondsText) (the request deadline)"))
                }
                awaiting.removeAll()
                sendHeld()
                return true
            }
            let ready = sockets.poll(timeout: min(deadline - now, .milliseconds(50)), listenerOnly: true)
            if ready.security { serviceSecurity() }
            if ready.listener { drainListener() }
            runTimers()
        }
        // Hosted children's renderings are flushed by the loop once this pass is over: taking
        // their snapshots here could re-enter the host that is settling.
        return settleChanged
    }

    func beginShutdown() {
        guard !shuttingDown else { return }
        let stopped = worker.shutDown()
        if let outcome = stopped.drain { reportDrain(outcome) }
        for hosted in stopped.children {
            hosted.child.stop()
            logStoppedHosting(hosted, because: "this worker is shutting down")
        }
        flushHosted()
        if sockets.hasUpstream { sendUpstream(kind: .goodbye, correlationID: 0, nodePath: "", payloads: []) }
        for (id, _) in workers {
            for proxyID in parent.workers[id]?.children ?? [] {
                proxies[proxyID].map {
                    sendToWorker(id, kind: .stop, correlationID: proxyID, epoch: parent.epoch(of: proxyID), nodePath: $0.path, payloads: [])
                }
            }
        }
        sendHeld()
    }

    /// Receives and handles messages until none is waiting, 10,000 were handled, or half a
    /// heartbeat interval has passed: between slices the loop runs its jobs and timers (the
    /// heartbeats), and what is left is read on the next iteration.
    func handleSlice<Message>(of receive: () -> Message?, _ handle: (Message) -> Void) {
        let deadline = ContinuousClock.now + configuration.heartbeatInterval / 2
        var budget = 10_000
        while budget > 0, let message = receive() {
            budget -= 1
            handle(message)
            if ContinuousClock.now >= deadline { break }
        }
    }

    func nextTimeout() -> Duration {
        configuration.heartbeatInterval
    }

    // MARK: Warnings caused by peers

    /// Logs a warning caused by a peer's traffic unless its kind is over its rate
    /// (`LogRateLimiter`), and returns whether it was logged. Callers answer the peer with ERROR
    /// only when it was: a peer flooding bad messages then costs neither log volume nor a queue
    /// of replies it never reads, and the warnings past the rate are still counted. `kind` is
    /// fixed text (it keys the limiter); anything the peer sent belongs in `detail`.
    @discardableResult
    func warnLimited(_ kind: String, detail: String? = nil, metadata: Logger.Metadata = [:], level: Logger.Level = .warning) -> Bool {
        guard peerWarnings.admit(kind) else { return false }
        logger.log(level: level, "\(kind)\(detail.map { ": \($0)" } ?? "")", metadata: metadata)
        return true
    }

    /// One line per kind of warning whose window ended with warnings suppressed: how many.
    func reportSuppressedWarnings() {
        for (kind, count) in peerWarnings.endedWindows() {
            logger.warning(
                "\(count) more warnings suppressed (at most \(peerWarnings.burst) per \(peerWarnings.window)): \(kind)",
                metadata: ["suppressed": .stringConvertible(count)])
        }
    }
}

/// A joined worker's connection, as the parent driver knows it: its identity and the messages
/// held for it. What the protocol knows of it (liveness, children, handovers) is the parent state
/// machine's (`ParentStateMachine.Worker`).
final class WorkerPeer {
    /// The longest worker or pool name a HELLO may carry, in UTF-8 bytes. Names go into log
    /// lines and placement decisions, so a peer cannot make them as long as a message; a real
    /// worker's routing id, which holds its name, is limited to 255 bytes by ZeroMQ anyway.
    static let maxNameBytes = 255

    let id: WorkerID
    let name: String
    let pool: String
    let hostedTypes: Set<String>
    let capacity: Int
    /// Where it runs, as its HELLO says (for the inspector; `nil` when it did not say).
    let processID: Int32?
    let hostName: String?
    /// START, UPDATE, STOP and EVENT messages for it, held until the pass settles or the loop
    /// iteration ends, then sent batched (`RemoteEngine.sendHeld`).
    var outbox = Outbox()
    /// Whether it is in the engine's `workersWithHeld` (listed once however often its outbox
    /// empties and fills again within a pass, as early batches make it).
    var isListedWithHeld = false
    /// An early batch found it gone: nothing more is sent to it until `sendHeld` removes it.
    var isUnreachable = false
    /// When it joined (wall clock, for the inspector).
    let joinedAt = Date()

    init(id: WorkerID, name: String, pool: String, hostedTypes: Set<String>, capacity: Int, processID: Int32? = nil, hostName: String? = nil) {
        self.id = id
        self.processID = processID
        self.hostName = hostName.map { String($0.prefix(Self.maxNameBytes)) }
        self.name = name
        self.pool = pool
        self.hostedTypes = hostedTypes
        self.capacity = capacity
    }
}

/// A worker's ZeroMQ routing id, as the parent's ROUTER socket reports it.
struct WorkerID: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]
    var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// Encodes a hosted child's renderings and outputs and queues them on the engine. Called by the
/// child's host on the loop thread.
struct HostedChildForwarder: Sendable {
    let childID: UInt64
    let path: String
    let exporter: SinkTable
    let bound: LoopBound<RemoteEngine>
    /// The engine's codec with the child's sink table in its encoder context, made once rather
    /// than for every output.
    let codec: any WireCodec

    init(childID: UInt64, path: String, exporter: SinkTable, bound: LoopBound<RemoteEngine>, codec: any WireCodec) {
        self.childID = childID
        self.path = path
        self.exporter = exporter
        self.bound = bound
        self.codec = codec.with(userInfo: [.workflowSinkExporter: SinkTransport<any SinkExporter>(exporter)])
    }

    /// Encodes at once, not at flush: encoding is what registers the rendering's sinks in the
    /// child's sink table, and events for them may arrive before the flush (a replay after a
    /// failover arrives right behind START).
    func rendering<R: Encodable>(_ rendering: R, propsSequence: UInt64) {
        let engine = bound.value
        do {
            let bytes = try codec.encode(rendering, reusing: engine.codingScratch)
            engine.enqueue(rendering: bytes, sequence: propsSequence, childID: childID, path: path)
        } catch {
            engine.log(error: "a rendering does not encode and was not sent: \(error)")
        }
    }

    func output<O: Encodable>(_ output: O) {
        let engine = bound.value
        do {
            let bytes = try codec.encode(output, reusing: engine.codingScratch)
            engine.enqueue(output: bytes, childID: childID, path: path)
        } catch {
            engine.log(error: "an output does not encode and was dropped: \(error)")
        }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
