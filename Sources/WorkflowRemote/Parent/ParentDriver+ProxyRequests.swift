import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The parent role, from the proxies: placing children on workers, their props and stops (their
/// events, and how everything is sent: `ParentDriver+SendsToWorkers.swift`; what workers send
/// back: `ParentDriver+MessagesFromWorkers.swift`).
extension ParentDriver {
    // MARK: Parent role: requests from proxies

    /// The concrete placement for a child, or `nil` to render it locally.
    func resolve(_ placement: RemotePlacement, typeName: @autoclosure () -> String, path: @autoclosure () -> String) -> RemotePlacement? {
        switch placement {
        case .local: nil
        case .configured: configuration.placementTable.placement(typeName: typeName(), path: path())
        default: placement
        }
    }

    /// A proxy for a remote child of the node at `path`, registered here (messages and events
    /// for its child id reach it) and its first status published. The proxy is given what it
    /// needs (its child id, its back-pressure account, the codecs, where its status goes), not
    /// this driver.
    ///
    /// - Parameters:
    ///   - path: the node's path in its host.
    ///   - scope: where that host sits in the whole tree (empty for a root host; a hosted
    ///     child's path in its parent's tree on a worker).
    ///   - snapshot, pendingEvents, lastRendering: see `RemoteChildProxy.init`.
    func makeProxy<Child: RemotableWorkflow>(
        of _: Child.Type, path: String, scope: String, placement: RemotePlacement, snapshot: TreeSnapshot?,
        pendingEvents: [PendingRemoteEvent], lastRendering: [UInt8]?
    ) -> RemoteChildProxy<Child> {
        let childID = allocateChildID()
        let outstanding = OutstandingEvents(limit: configuration.maxOutstandingEvents, path: path, logger: logger)
        let forwardingPrefix = SinkForwarder.prefix(scope: scope, path: path)
        let environment = RemoteChildProxyEnvironment(
            codec: codec,
            importingCodec: codec.with(
                userInfo: importerUserInfo(childID: childID, path: path, forwardingPrefix: forwardingPrefix, outstanding: outstanding)),
            codingScratch: codingScratch, logger: logger, status: RemoteChildStatusReporter(shared: shared, logger: logger),
            unacknowledged: unacknowledgedEvents)
        let proxy = RemoteChildProxy<Child>(
            childID: childID, path: path, typeName: remoteTypeName(of: Child.self), forwardingPrefix: forwardingPrefix, placement: placement,
            outstanding: outstanding,
            environment: environment, snapshot: snapshot, pendingEvents: pendingEvents, lastRendering: lastRendering)
        register(proxy: proxy)
        parent.childAdded(childID)
        statusChanged(path: path, typeName: proxy.typeName, status: proxy.status)
        return proxy
    }

    /// `Child.remoteTypeName`, computed once per type: it reflects on the type (14 k instructions
    /// a time), and a pass that starts a thousand children of one type asked it a thousand times.
    func remoteTypeName<Child: RemotableWorkflow>(of _: Child.Type) -> String {
        if let known = remoteTypeNames[ObjectIdentifier(Child.self)] { return known }
        let name = Child.remoteTypeName
        remoteTypeNames[ObjectIdentifier(Child.self)] = name
        return name
    }

    /// The START payload of a child without a snapshot (a new one): the same for every child of
    /// `typeName`, so encoded once per type, not once per child.
    func startPayload(typeName: String) throws -> [UInt8] {
        if let known = startPayloads[typeName] { return known }
        let payload = try codec.encode(StartPayload(typeName: typeName, snapshot: nil))
        startPayloads[typeName] = payload
        return payload
    }

    func allocateChildID() -> UInt64 {
        defer { nextChildID += 1 }
        return nextChildID
    }

    func register(proxy: any AnyRemoteChildProxy) {
        proxies[proxy.childID] = proxy
        if case .hashed = proxy.placement { rebalanceProgress.hashedChildRegistered(proxy.childID) }
        proxiesByTree[SessionLoop.treePrefix(of: proxy.path), default: []].insert(proxy.childID)
        forwardingRoutes[proxy.forwardingPrefix] = proxy.childID
    }

    func propsRendered(proxy: any AnyRemoteChildProxy, changed: Bool) -> ParentStateMachine.PropsAction {
        parent.propsRendered(proxy.childID, changed: changed)
    }

    /// The child `proxy` cannot run: the machine has it unplaced (or refused), and its proxy
    /// shows why.
    func fail(_ proxy: any AnyRemoteChildProxy, _ error: RemoteChildError) {
        parent.childFailed(proxy.childID, with: error)
        proxy.fail(error)
    }

    func start(proxy: any AnyRemoteChildProxy, props: [UInt8]) {
        let choice = placementChoice(for: proxy, withinGrace: now < placementGraceEnds)
        guard case .worker(let name) = choice, let id = parent.worker(named: name, taking: proxy.typeName), let peer = workers[id] else {
            switch choice {
            case .wait:
                // Still `starting`: placed when the pool's workers have joined or the grace ends.
                childrenWaitForGrace = true
            case .noReader:
                // Kept, with its state, until a worker that reads it joins (`ParentStateMachine.retryPlacement(of:)`).
                fail(proxy, .noWorkerReadsState(typeName: proxy.typeName, stateVersion: proxy.stateVersion, placement: "\(proxy.placement)"))
            case .worker, .none:
                if let drained = parent.phase(of: proxy.childID)?.movingFrom {
                    fail(proxy, .workerDrained(worker: drained, waitingFor: waitingFor(proxy.placement, typeName: proxy.typeName)))
                } else {
                    fail(proxy, .noWorker(typeName: proxy.typeName, placement: "\(proxy.placement)"))
                }
            }
            return
        }
        guard (parent.workers[id]?.children.count ?? 0) < peer.capacity else {
            refuseForCapacity(proxy, on: peer)
            return
        }
        do {
            let snapshot = proxy.snapshot
            let start = try snapshot == nil ? startPayload(typeName: proxy.typeName) : codec.encode(StartPayload(typeName: proxy.typeName, snapshot: snapshot))
            // A new placement: a new fencing token, so anything still on the way from or to an
            // earlier placement of this child is recognisably stale. The snapshot includes every
            // event before the first unacknowledged one (with none, every event recorded):
            // the events replayed (or sent next) follow it without a gap, so the worker can tell
            // if the first of them was lost in transit.
            let placement = parent.newPlacement(of: proxy.childID, snapshotThrough: proxy.snapshotThrough)
            inspection.placedAt[proxy.childID] = Date()
            let movedFrom = parent.placed(proxy.childID, on: id)
            settles.asked(proxy.childID, tree: SessionLoop.treePrefix(of: proxy.path))
            noteRequestSent(childID: proxy.childID, sequence: proxy.propsSequence)
            sendToWorker(
                id, hold: true, kind: .start, correlationID: proxy.childID, sequence: proxy.propsSequence, acknowledged: placement.snapshotThrough,
                epoch: placement.epoch, nodePath: proxy.path, payloads: [start, props])
            logger.debug("start", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "correlation": .stringConvertible(proxy.childID)])
            // Events the previous worker never acknowledged are replayed, in order, on top of
            // the snapshot they were not yet part of, batched as any events are. After a drain
            // that is only the events kept here during the move: the old worker's final snapshot
            // holds everything it applied.
            let replay = proxy.unacknowledgedCount
            if proxy.hasRestoredEvents {
                // Events that came with the child's snapshot (its node was restored, or moved to
                // another placement): not a failover of this child.
                proxy.restoredEventsSent()
                logger.info(
                    "sending \(replay) events kept with the child's snapshot", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)"])
            } else if let drained = movedFrom {
                metrics.handovers.increment()
                if rebalancing.remove(proxy.childID) != nil {
                    metrics.rebalanceMoves.increment()
                    logger.info(
                        "moved from \(drained) (rebalance)", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "events": .stringConvertible(replay)])
                } else {
                    logger.info(
                        "moved after \(drained) drained", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)", "events": .stringConvertible(replay)])
                }
            } else if replay > 0 {
                metrics.failovers.increment()
                metrics.eventsReplayed.increment(by: Int64(replay))
                logger.info("replaying \(replay) unacknowledged events", metadata: ["path": "\(proxy.path)", "worker": "\(peer.name)"])
            }
            sendDueEvents(of: proxy)
        } catch {
            fail(proxy, .refused("START does not encode: \(error)"))
        }
    }

    func update(proxy: any AnyRemoteChildProxy, props: [UInt8], on worker: WorkerID?) {
        // Events recorded before the new props go first, as they were sent first.
        sendDueEvents(of: proxy)
        settles.asked(proxy.childID, tree: SessionLoop.treePrefix(of: proxy.path))
        // Its worker is draining: the new props go with the START on the next worker, which the
        // settle waits for (the release ends the wait, and the render after it starts the child).
        guard let worker else { return }
        noteRequestSent(childID: proxy.childID, sequence: proxy.propsSequence)
        sendToWorker(
            worker, hold: true, kind: .update, correlationID: proxy.childID, sequence: proxy.propsSequence, epoch: parent.epoch(of: proxy.childID),
            nodePath: proxy.path,
            payloads: CollectionOfOne(props))
    }

    /// Stops `proxy`'s child on its worker. `sendingDueEvents: false` when another proxy takes
    /// over the child's unacknowledged events (`RemoteChildProxy.handOver()`).
    func stop(proxy: any AnyRemoteChildProxy, sendingDueEvents: Bool = true) {
        let epoch = parent.epoch(of: proxy.childID)
        let host = parent.host(of: proxy.childID)
        // Before the machine forgets the child: what was sent to its placement is kept there.
        if sendingDueEvents, host != nil { sendDueEvents(of: proxy) }
        if proxies.removeValue(forKey: proxy.childID) != nil {
            let tree = SessionLoop.treePrefix(of: proxy.path)
            proxiesByTree[tree]?.remove(proxy.childID)
            if proxiesByTree[tree]?.isEmpty == true { proxiesByTree[tree] = nil }
        }
        parent.forget(proxy.childID)
        rebalancing.remove(proxy.childID)
        rebalanceProgress.childStopped(proxy.childID)
        if forwardingRoutes[proxy.forwardingPrefix] == proxy.childID { forwardingRoutes[proxy.forwardingPrefix] = nil }
        answered(proxy)
        inspection.forget(childID: proxy.childID)
        shared.setStatus(nil, path: proxy.path, typeName: proxy.typeName)
        guard let host, let peer = workers[host] else { return }
        unplace(proxy.childID, from: peer)
        sendToWorker(peer.id, hold: true, kind: .stop, correlationID: proxy.childID, epoch: epoch, nodePath: proxy.path, payloads: [])
    }

    /// The worker placement chose for `proxy` holds its capacity already: the child waits (it
    /// would be refused there), and the log says so once for the worker, not once per child.
    func refuseForCapacity(_ proxy: any AnyRemoteChildProxy, on peer: WorkerPeer) {
        if !peer.saidAtCapacity {
            peer.saidAtCapacity = true
            logger.warning(
                "worker \(peer.name) is at capacity: the children placed on it wait until a worker with room joins (raise its capacity, or add workers)",
                metadata: ["worker": "\(peer.name)", "capacity": .stringConvertible(peer.capacity)])
        }
        fail(proxy, .workerAtCapacity(worker: peer.name, capacity: peer.capacity))
    }

    /// Publishes a child's new status and logs it, once per change (the proxy reports its own
    /// changes the same way, `RemoteChildStatusReporter`).
    func statusChanged(path: String, typeName: String, status: RemoteChildStatus) {
        RemoteChildStatusReporter(shared: shared, logger: logger).report(path: path, typeName: typeName, status: status)
    }

    /// The decoder context for a proxy's renderings and outputs: sinks in them send EVENTs to
    /// the proxy's child.
    func importerUserInfo(
        childID: UInt64, path: String, forwardingPrefix: String, outstanding: OutstandingEvents
    ) -> [CodingUserInfoKey: any Sendable] {
        let jobs = self.jobs
        let bound = LoopBound(self, owner: jobs)
        let forwarder = SinkForwarder(
            prefix: forwardingPrefix,
            send: { token, bytes, context in
                let event = QueuedEvent(childID: childID, path: path, token: token, bytes: bytes)
                if let context {
                    // Traced: the context goes along, on a path of its own.
                    if jobs.isOwnerThread {
                        bound.value.sendEvent(event, context: context)
                    } else {
                        jobs.append(event: event, context: context)
                    }
                    return
                }
                // On the loop already (a middle process passing on its parent's event, or an
                // action sending to a remote child): recorded now, so the snapshot that goes with
                // this iteration's acknowledgement includes it. Otherwise queued for the loop as
                // data (no closure per event).
                if jobs.isOwnerThread {
                    bound.value.sendEvent(event)
                } else {
                    jobs.append(event: event)
                }
            },
            codec: codec,
            outstanding: outstanding, tracer: tracer)
        return [.workflowSinkImporter: SinkTransport<any SinkImporter>(forwarder)]
    }

    /// Where `proxy`'s child goes now (`PoolPlacement.choose`): among the connected workers that
    /// host its type and are not draining (a draining worker is leaving: nothing new goes there),
    /// one that reads the state version of the child's snapshot.
    func placementChoice(for proxy: any AnyRemoteChildProxy, withinGrace: Bool) -> PoolPlacement.Choice {
        poolPlacement.choose(
            proxy.placement, typeName: proxy.typeName, path: proxy.path, stateVersion: proxy.stateVersion,
            among: parent.candidates(hosting: proxy.typeName), withinGrace: withinGrace)
    }
}
