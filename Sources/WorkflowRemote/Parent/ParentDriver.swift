import Foundation
import Logging
import Tracing
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The parent role's driver, confined to the loop thread: it feeds the parent's state machine
/// (`ParentStateMachine`) from the workers' socket, the proxies' requests and the timers, and
/// performs what it decides (placing children, the sends, the proxies' calls).
///
/// It places remote children on workers, sends START/UPDATE/STOP/EVENT and routes
/// RENDERING/OUTPUTS/ERROR back to the children's proxies. Every message from a worker is
/// checked; a bad one is logged (and answered with ERROR where the protocol allows) and never
/// stops the loop. The messages are read in `ParentDriver+MessagesFromWorkers.swift`, the
/// proxies' requests taken in `+ProxyRequests` and everything sent in `+SendsToWorkers`.
final class ParentDriver: LoopRoleDriver {
    /// What the loop gives both drivers (its configuration, codec, sockets, queue, metrics).
    let resources: LoopResources

    var workers: [WorkerID: WorkerPeer] = [:]
    var proxies = ProxyTable()
    /// The proxies of each tree (`SessionLoop.treePrefix(of:)`), so one session's inspection
    /// reads its own children, not every session's.
    var proxiesByTree: [String: Set<UInt64>] = [:]
    /// Each remote child's forwarding prefix → its proxy (`forwardingRoute(for:)`).
    var forwardingRoutes: [String: UInt64] = [:]
    /// The children whose rendering a render pass waits for, and the session passes waiting
    /// (`RemoteEngine.settle()`, `RemoteEngine.settle(tree:resuming:)`).
    var settles = SettleWaits()
    /// The protocol state and decisions about the workers (`ParentStateMachine`): who joined,
    /// who is alive, which children each hosts and hands over.
    var parent: ParentStateMachine
    var nextChildID: UInt64 = 1
    /// Each remote child type's `remoteTypeName` (`remoteTypeName(of:)`).
    var remoteTypeNames: [ObjectIdentifier: String] = [:]
    /// Each type's START payload for a child without a snapshot (`startPayload(typeName:)`).
    var startPayloads: [String: [UInt8]] = [:]
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
    /// When the next rebalance plan is made (once per heartbeat interval).
    var nextRebalance: ContinuousClock.Instant
    /// The hashed children and the sweep of them after the workers change (`ParentDriver+Rebalance`).
    var rebalanceProgress = RebalanceProgress()
    /// How many children and workers the timers have looked at since the loop began (and the
    /// proxies any walk of the whole table looked at, `ProxyTable.walked`): a test holds it to a
    /// bound per timer check that does not grow with the children held.
    var periodicVisits: Int { countedVisits + proxies.walked }
    /// What the timers counted themselves of `periodicVisits`.
    var countedVisits = 0
    /// Session commits waiting for their trees' children to acknowledge events
    /// (`whenEventsAcknowledged(tree:within:_:)`).
    var acknowledgementWaits = AcknowledgementWaits()
    /// The loop has ended: nothing more will be acknowledged, so nothing waits for it.
    var loopHasEnded = false
    /// Whether a worker's message changed a proxy since the settle began (its pass renders again).
    var settleChanged = false
    /// Children with events recorded in this loop iteration and not sent yet (`sendDueEvents`).
    var childrenWithEventsDue: [UInt64] = []
    /// The trace contexts of recorded events not sent yet (empty unless the runtime traces).
    var eventTraceContexts = EventTraceContexts()
    /// The runtime's tracer (`RemoteRuntimeConfiguration.tracer`), kept at hand: `nil` is
    /// tracing off, checked before any tracing work.
    let tracer: (any Tracer)?
    /// Workers whose outbox (`WorkerPeer.outbox`) holds messages, sent at the end of the pass or
    /// loop iteration (`sendHeld`).
    var workersWithHeld: [WorkerPeer] = []
    /// Workers an early batch (`sendClosedBatches(of:)`) found gone, removed by the next
    /// `sendHeld`.
    var workersUnreachableEarly: [WorkerPeer] = []
    /// Where a message sent at once is assembled (its storage reused from one to the next).
    var immediateOutbox = Outbox()
    /// The message read last from the workers' socket, in storage reused for the next one.
    var receivedFrames = ZMQFrameBuffer()
    /// That message decoded, its payload array and node path reused for the next one.
    var receivedEnvelope = Envelope(kind: .heartbeat)
    /// A message of a received `packedBatch`, decoded in place in the same way.
    var batchedEnvelope = Envelope(kind: .heartbeat)
    /// Set while a failed send reads what the workers sent last (`lost`), so it does not recurse.
    var isDrainingAfterSendFailure = false
    var peerWarnings = LogRateLimiter()
    /// What the inspector sees and the metrics count (`ParentDriver+Inspection.swift`).
    var inspection = InspectionCounters()
    /// The children's unacknowledged events, summed as their ledgers change (a gauge).
    let unacknowledgedEvents = UnacknowledgedEventCount()
    /// The placement rules and announced types left out, warned of once each.
    var placementCoverage: PlacementCoverage

    init(resources: LoopResources) {
        self.resources = resources
        let configuration = resources.configuration
        tracer = configuration.tracer
        poolPlacement = PoolPlacement(configuredMembers: configuration.poolMembers)
        placementGraceEnds = resources.clock.now + configuration.placementGrace
        nextRebalance = resources.clock.now
        placementCoverage = PlacementCoverage(
            table: configuration.placementTable, listedWorkers: Set(configuration.poolMembers.values.joined()))
        parent = ParentStateMachine(
            configuration: .init(
                heartbeatInterval: configuration.heartbeatInterval, heartbeatLiveness: configuration.heartbeatLiveness,
                acknowledgementDeadline: configuration.requestTimeout, checks: configuration.protocolChecks))
    }

    /// The child `childID` no longer runs on `peer` (stopped, refused, no answer in time); a
    /// drain it ended is reported.
    func unplace(_ childID: UInt64, from peer: WorkerPeer) {
        if parent.unplaced(childID, from: peer.id) { reportDrained(peer) }
        if peer.saidAtCapacity, (parent.workers[peer.id]?.children.count ?? 0) < peer.capacity {
            // Said again if it fills up again.
            peer.saidAtCapacity = false
            logger.info("worker \(peer.name) has room again", metadata: ["worker": "\(peer.name)", "capacity": .stringConvertible(peer.capacity)])
        }
    }

    /// The start's placement grace, from the loop's timers: once it is over, children still
    /// waiting for their pool's missing workers are placed among those present.
    func checkPlacementGrace(at now: ContinuousClock.Instant) {
        if !placementGraceIsOver, now >= placementGraceEnds {
            placementGraceIsOver = true
            warn(of: placementCoverage.placementGraceEnded())
            if configuration.placementGrace > .zero {
                // Said once: from here on children go to the workers present and rebalancing runs.
                logger.info("placement grace over", metadata: ["workers": .stringConvertible(workers.count)])
            }
        }
        if childrenWaitForGrace, placementGraceIsOver {
            childrenWaitForGrace = false
            for proxy in proxies.walkAll() where parent.retryPlacement(of: proxy.childID) { proxy.placementRetried() }
        }
    }

    /// Warns of placement rules that match no announced type and announced types no rule
    /// places (each once: `PlacementCoverage`).
    func warn(of gaps: [PlacementCoverage.Gap]) {
        for gap in gaps {
            switch gap {
            case .ruleMatchesNothing(let index, let pattern, let announced):
                logger.warning(
                    "placement[\(index)] matches no type a worker announced: its children run in the coordinator",
                    metadata: ["match": "\(pattern)", "announced": "\(announced.joined(separator: ", "))"])
            case .typesUnplaced(let types, let worker):
                logger.warning(
                    "no placement rule places \(types.joined(separator: ", ")), announced by \(worker): their configured children run in the coordinator",
                    metadata: ["types": "\(types.joined(separator: ", "))", "worker": "\(worker)"])
            }
        }
    }

    /// The settle's deadline passed with renderings still awaited: each such child's copy is
    /// stopped (it will be placed again) and its proxy fails.
    func abandonAwaited() {
        abandon(settles.takeUnclaimed())
    }

    /// The pending session settles whose deadline passed: their children are given up on as
    /// `abandonAwaited()` does, and their hosts resumed (to render what failed).
    func abandonExpiredSettles(now: ContinuousClock.Instant) {
        for settle in settles.expired(now: now) {
            abandon(settle.waiting)
            for resume in settle.resumes { resume(true) }
        }
    }

    /// Child `proxy`'s answer came, or it failed, moved or stopped: the settle waiting for it
    /// ends with the last one (a pending session settle is resumed); whether any waited.
    @discardableResult
    func answered(_ proxy: any AnyRemoteChildProxy) -> Bool {
        let (awaited, completed) = settles.answered(proxy.childID)
        if let completed {
            for resume in completed.resumes { resume(completed.changed) }
        }
        return awaited
    }

    /// Child `proxy` changed what its tree renders while a settle may wait: that pass renders again.
    func markChanged(_ proxy: any AnyRemoteChildProxy) {
        settleChanged = true
        settles.changed(proxy.childID)
    }

    private func abandon(_ ids: Set<UInt64>) {
        guard !ids.isEmpty else { return }
        for id in ids {
            guard let proxy = proxies[id] else { continue }
            let peer = parent.host(of: id).flatMap { workers[$0] }
            let worker = peer?.name ?? "?"
            logger.warning("no rendering within the request deadline", metadata: ["path": "\(proxy.path)", "worker": "\(worker)"])
            // The child will be placed again: its copy on this worker must not live on.
            if let peer {
                unplace(id, from: peer)
                sendToWorker(peer.id, kind: .stop, correlationID: id, epoch: parent.epoch(of: id), nodePath: proxy.path, payloads: [])
            }
            fail(proxy, .workerUnavailable(worker: worker, reason: "did not answer within \(configuration.requestTimeout.secondsText) (the request deadline)"))
        }
        sendHeld()
    }

    /// This process is shutting down: every child placed on a worker is stopped there.
    func stopChildrenOnWorkers() {
        for (id, _) in workers {
            for proxyID in parent.workers[id]?.children ?? [] {
                proxies[proxyID].map {
                    sendToWorker(id, kind: .stop, correlationID: proxyID, epoch: parent.epoch(of: proxyID), nodePath: $0.path, payloads: [])
                }
            }
        }
        sendHeld()
    }

    /// Stops the remote children of the session trees `trees` (`SessionLoop.pathPrefix`) on
    /// their workers and forgets them here, without tearing their nodes down: the coordinator
    /// leaves those sessions at its exit (their last checkpoints committed) and frees their hosts
    /// only after this runtime has shut down. Each proxy is stopped as its node's teardown would
    /// stop it, so that teardown finds nothing left to do, and a pass of such a tree meanwhile
    /// sends nothing (the parent machine asks nothing for a child it forgot). Costs the trees'
    /// children, once.
    func stopChildren(ofTrees trees: [String]) {
        for tree in trees {
            for id in proxiesByTree[tree] ?? [] { proxies[id]?.stop(requests: self) }
        }
        sendHeld()
    }

    /// Calls `body` (on the loop) once the remote children of the session tree `tree` have
    /// acknowledged every event they were sent before this call, at once if none is
    /// outstanding, and at the latest after `within`: see `SessionLoop.whenEventsAcknowledged`.
    func whenEventsAcknowledged(tree: String, within: Duration, _ body: @escaping @Sendable () -> Void) {
        var awaited: [(child: UInt64, through: UInt64)] = []
        if !loopHasEnded {
            for id in proxiesByTree[tree] ?? [] {
                if let last = proxies[id]?.lastUnacknowledgedEvent { awaited.append((id, last)) }
            }
        }
        guard !awaited.isEmpty else { return body() }
        acknowledgementWaits.add(awaited, deadline: resources.clock.now + within, body: body)
    }

    /// Queues the captures whose events are acknowledged, or whose deadline passed: each runs as
    /// a job after the jobs already queued (the node's pass that shows the acknowledged
    /// rendering among them). A child stopped or replaced meanwhile waits for nothing more.
    func serviceAcknowledgementWaits() {
        guard acknowledgementWaits.count > 0 else { return }
        let due = acknowledgementWaits.takeDue(now: resources.clock.now) { id, through in
            proxies[id]?.hasAcknowledged(through: through) ?? true
        }
        for body in due { resources.jobs.append(body) }
    }

    /// The loop has ended: what a job may still ask of this role (a host stopped or updated
    /// late) finds nobody to send to, and the children placed on workers say so.
    func loopEnded() {
        loopHasEnded = true
        for body in acknowledgementWaits.takeAll() { resources.jobs.append(body) }
        for (_, peer) in workers {
            for id in parent.workers[peer.id]?.children ?? [] {
                if let proxy = proxies[id] {
                    fail(proxy, .workerUnavailable(worker: peer.name, reason: "is out of reach: this process's remote runtime has shut down"))
                }
            }
        }
        workers.removeAll()
        workersWithHeld.removeAll()
        for settle in settles.removeAll() {
            for resume in settle.resumes { resume(true) }
        }
    }
}
