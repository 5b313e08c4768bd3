@testable import WorkflowRemote

/// A simulated hosted child: a counter of the events it applied. Applying checks the lineage's
/// invariant (each event once, in order, from the snapshot it started from).
final class SimulatedChild {
    let childID: UInt64
    let epoch: UInt64
    /// Which process incarnation hosts this copy.
    let host: Int
    var state: CounterSnapshot

    init(childID: UInt64, epoch: UInt64, host: Int, state: CounterSnapshot) {
        self.childID = childID
        self.epoch = epoch
        self.host = host
        self.state = state
    }
}

/// A simulated worker process: the worker role's real state machine (`WorkerStateMachine`)
/// driven the way the engine's driver drives it, one small step at a time (one event applied,
/// one message read, or one flush and timer round), so the scheduler can stop it between any two
/// steps (SIGSTOP) and resume it late.
///
/// A nested worker is also a parent: its process runs a parent role (`nested`) beside the worker
/// role, the two sharing its fate (stopped, crashed and restarted together). A worker whose
/// `parentIndex` is set joins such a nested worker's parent role instead of the top parent.
final class SimulatedWorker {
    typealias Instant = ContinuousClock.Instant
    typealias Machine = WorkerStateMachine<SimulatedChild>

    let index: Int
    /// The nested worker whose parent role this worker joins (nil: the top parent).
    let parentIndex: Int?
    /// This process's parent role, if it is a nested worker (a new one with each incarnation).
    var nested: SimulatedParent?
    let configuration: Machine.Configuration
    /// Changes with every restart (a crash loses the process's memory).
    private(set) var incarnation: Int
    private(set) var machine: Machine
    private(set) var connection: SimulatedConnection
    /// The events message being applied, one event per step.
    private var run: Machine.EventRun?
    /// Until when the process is stopped (SIGSTOP) or down (crashed, restarting).
    var pausedUntil: Instant?
    var downUntil: Instant?
    /// When this incarnation last read a message from its parent or completed a handshake,
    /// recorded here independently of the machine's own bookkeeping: the lease invariant.
    private(set) var lastHeard: Instant
    private var renderList: [UInt64] = []
    private var flushList: [UInt64] = []
    static let eventsPerSlice = 16

    init(
        index: Int, parentIndex: Int? = nil, incarnation: Int, configuration: Machine.Configuration, connection: SimulatedConnection, now: Instant
    ) {
        self.index = index
        self.parentIndex = parentIndex
        self.incarnation = incarnation
        self.configuration = configuration
        self.connection = connection
        machine = Machine(configuration: configuration, now: now)
        lastHeard = now
    }

    var isRunning: Bool { pausedUntil == nil && downUntil == nil }
    /// In the middle of an events message: as in the engine, where a job (a drain's start)
    /// runs between messages, never within one, nothing else happens until it is applied.
    var isApplyingEvents: Bool { run != nil }

    /// One step of the worker's loop at `now`.
    func step(at now: Instant, in world: Simulation) {
        if !connection.handshakeDone, !connection.isClosed, now >= connection.handshakeAt, world.bothWaysOpen(for: index) {
            connection.handshakeDone = true
            lastHeard = now
            if machine.handshakeSucceeded(at: now).sendHello { sendHello(at: now, in: world) }
            return
        }
        // The socket reconnected by itself after a disconnect (its monitor's event). The monitor
        // is a socket of its own: the driver may read the parent's first messages on the new
        // connection before it (either order, when both are waiting).
        if connection.rehandshakePending, !connection.isDown(at: now), world.bothWaysOpen(for: index),
            connection.arrivedAtWorker.isEmpty || world.random.chance(0.5)
        {
            connection.rehandshakePending = false
            guard world.workerRejoinsOnRehandshake else { return }
            let handshake = machine.handshakeSucceeded(at: now)
            if let fence = handshake.fence {
                world.count.rehandshakeFences += 1
                perform(fence, at: now, in: world)
            } else {
                lastHeard = now
                if handshake.sendHello { sendHello(at: now, in: world) }
            }
            return
        }
        if pendingDeparture {
            pendingDeparture = false
            leave(DrainOutcome(ending: .notConnected, children: 0, handedOver: 0), at: now, in: world)
            return
        }
        if var current = run {
            switch machine.nextEvent(of: &current, at: now) {
            case .apply(let sequence):
                world.apply(sequence, by: current.child, worker: self, at: now)
                var bytes = [UInt8](repeating: 0, count: 8)
                for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: sequence >> (8 * index)) }
                machine.outputProduced(bytes, childID: current.childID, path: "/child")
                machine.eventApplied(in: &current, delivered: true)
                run = current
            case .done:
                machine.endEvents(current)
                run = nil
            case .leaseRanOut:
                machine.endEvents(current)
                run = nil
                if let fence = machine.fenceIfLeaseRanOut(at: now) { perform(fence, at: now, in: world) }
            }
            return
        }
        // The loop's first check, before any queued input is touched. Not between two events of
        // one message: the engine applies a message's events in one go, so there only the
        // machine's check before each event (`nextEvent`) stands between a worker woken past its
        // lease and the rest of the message.
        if let fence = machine.fenceIfLeaseRanOut(at: now) {
            perform(fence, at: now, in: world)
            return
        }
        if machine.sliceContinues(limit: Self.eventsPerSlice, at: now), let message = connection.arrivedAtWorker.popFirst() {
            machine.heardFromParent(at: now)
            lastHeard = now
            handle(message, at: now, in: world)
            return
        }
        // The end of a slice: flush, then the timers.
        flush(at: now, in: world)
        if let outcome = machine.drainDeadline(at: now) {
            leave(outcome, at: now, in: world)
            return
        }
        let tick = machine.tick(at: now)
        if tick.sendHeartbeat { send(.heartbeat, at: now, in: world) }
        if let fence = tick.fence { perform(fence, at: now, in: world) }
        machine.beginSlice(at: now)
    }

    private func handle(_ message: SimulatedMessage, at now: Instant, in world: Simulation) {
        switch message {
        case .welcome:
            machine.welcomed(drains: true, startsCarryBase: world.startCarriesBase)
        case .reconnect:
            if let forgotten = machine.reconnectRequested() {
                stop(forgotten, in: world)
                sendHello(at: now, in: world)
            }
        case .start(let childID, let epoch, let snapshot, let base):
            if base != snapshot.applied { world.violation("child \(childID): START says its snapshot ends at \(base), it holds \(snapshot.applied)") }
            guard machine.startRequested() == .place else { return }
            if let earlier = machine.discard(childID) { world.stopped(earlier.child) }
            let child = SimulatedChild(childID: childID, epoch: epoch, host: incarnation, state: snapshot)
            machine.started(childID, epoch: epoch, path: "/child", child: child, appliedThrough: world.startCarriesBase ? base : 0)
            world.started(child)
            machine.renderingProduced([], sequence: 0, childID: childID, path: "/child")
        case .events(let childID, let epoch, let first, let count):
            guard world.workerChecksEventSequence else {
                // The protocol before the check: any first sequence is taken.
                run = machine.beginEvents(for: childID, epoch: epoch, firstSequence: first, count: count)
                return
            }
            switch machine.eventsArrived(for: childID, epoch: epoch, firstSequence: first, count: count, at: now) {
            case .apply(let events): run = events
            case .unknownChild: world.count.droppedEventMessages += 1
            case .inputLost(_, _, let fence):
                world.count.lostInputFences += 1
                perform(fence, at: now, in: world)
            }
        case .stop(let childID, let epoch):
            if let stopped = machine.stopRequested(childID, epoch: epoch) { world.stopped(stopped.child) }
        case .release(let childID, let epoch):
            switch machine.releaseRequested(childID, epoch: epoch, path: "/child", forwardedEventsUnacknowledged: false) {
            case .notHosted:
                send(.outputs(child: childID, epoch: epoch, number: 0, causes: [], acknowledged: nil, snapshot: nil, released: true), at: now, in: world)
            case .deferred:
                world.violation("worker \(index) deferred a release with nothing forwarded")
            case .release:
                machine.renderingProduced([], sequence: 0, childID: childID, path: "/child")
                if let message = flushMessage(childID, releasing: true, in: world) { send(message, at: now, in: world) }
                if let released = machine.released(childID) { world.stopped(released.child) }
            }
        case .drainAnswer:
            if let outcome = machine.drainAnswered() { leave(outcome, at: now, in: world) }
        case .heartbeat:
            break
        case .hello, .outputs, .rendering, .drain, .goodbye:
            world.violation("worker \(index) received a worker's message")
        }
    }

    private func flush(at now: Instant, in world: Simulation) {
        machine.takeChildrenToRender(into: &renderList)
        for childID in renderList {
            machine.renderingProduced([], sequence: 0, childID: childID, path: "/child")
        }
        machine.takeFlushOrder(into: &flushList)
        for childID in flushList {
            if let message = flushMessage(childID, releasing: false, in: world) { send(message, at: now, in: world) }
        }
    }

    /// What the machine's flush of `childID` sends, as the engine's driver builds it.
    private func flushMessage(_ childID: UInt64, releasing: Bool, in world: Simulation) -> SimulatedMessage? {
        guard let flush = machine.flush(childID, releasing: releasing), let child = machine.children[childID]?.child else { return nil }
        if flush.isRenderingOnly { return .rendering(child: childID, epoch: flush.epoch) }
        if let acknowledged = flush.acknowledged, acknowledged != child.state.applied {
            world.violation("worker \(index) acknowledged \(acknowledged) with a snapshot after \(child.state.applied)")
        }
        return .outputs(
            child: childID, epoch: flush.epoch, number: machine.numberOutputsMessage(for: childID), causes: flush.outputs?.causes ?? [],
            acknowledged: flush.acknowledged, snapshot: child.state, released: flush.released)
    }

    /// Begins a drain (a planned departure): the worker leaves once it ends.
    func drain(at now: Instant, in world: Simulation) {
        switch machine.beginDrain(deadline: .seconds(2), at: now) {
        case .alreadyRunning:
            break
        case .finished(let outcome), .unsupportedByParent(let outcome):
            leave(outcome, at: now, in: world)
        case .begun:
            flush(at: now, in: world)
            send(.drain, at: now, in: world)
        }
    }

    /// The drain ended: the worker says GOODBYE and its process exits (it starts again later, a
    /// new incarnation).
    private func leave(_ outcome: DrainOutcome, at now: Instant, in world: Simulation) {
        world.count.drains += 1
        if outcome.ending == .handedOver { world.count.handedOver += outcome.handedOver }
        let stopped = machine.shutDown()
        for hosted in stopped.children { world.stopped(hosted.child) }
        send(.goodbye, at: now, in: world)
        run = nil
        downUntil = now + world.random.milliseconds(in: 50...500)
        // What it sent leaves before the socket closes (linger); what it would read is lost.
        connection.arrivedAtWorker.removeAll()
        world.processEnded(self)
    }

    /// Set when a drain ended with a fence: the worker leaves at its next step.
    private var pendingDeparture = false

    private func perform(_ fence: Machine.Fence, at now: Instant, in world: Simulation) {
        switch fence {
        case .stopWhileLeaving(_, let forgotten):
            stop(forgotten, in: world)
        case .reconnect(_, _, _, let forgotten):
            stop(forgotten, in: world)
            run = nil
            connection.close()
            connection = world.connect(worker: index, at: now)
            sendHello(at: now, in: world)
        }
    }

    private func stop(_ forgotten: Machine.Forgotten, in world: Simulation) {
        for hosted in forgotten.children { world.stopped(hosted.child) }
        // A drain that ended with them: the worker leaves (it stopped its children already).
        if forgotten.drain != nil { pendingDeparture = true }
        if let current = run, forgotten.children.contains(where: { $0.childID == current.childID }) { run = nil }
    }

    private func sendHello(at now: Instant, in world: Simulation) {
        send(.hello(worker: index, instance: incarnation), at: now, in: world)
    }

    private func send(_ message: SimulatedMessage, at now: Instant, in world: Simulation) {
        guard connection.handshakeDone, !connection.isClosed else {
            if case .hello = message { _ = machine.sendFailed(hello: true) } else { _ = machine.sendFailed(hello: false) }
            return
        }
        connection.sendToParent(message, at: now, delay: world.delay())
        machine.sentToParent(at: now)
    }

    /// The process crashed: its memory is gone, its socket closed.
    func crash(until restart: Instant, in world: Simulation) {
        for hosted in machine.children.values { world.stopped(hosted.child) }
        pendingDeparture = false
        connection.close()
        run = nil
        downUntil = restart
        world.processEnded(self)
    }

    /// The process starts again, as a new incarnation knowing nothing.
    func restart(incarnation: Int, connection: SimulatedConnection, at now: Instant) {
        // The old process's socket is gone (after a departure, what it sent had its time to leave).
        self.connection.close()
        self.incarnation = incarnation
        self.connection = connection
        machine = Machine(configuration: configuration, now: now)
        lastHeard = now
        run = nil
        downUntil = nil
        pendingDeparture = false
    }

    /// The process's first HELLO (sent when its first handshake completes).
    func start(at now: Instant, in world: Simulation) {
        sendHello(at: now, in: world)
    }

    var memory: Int { machine.pendingCount + machine.children.count + connection.held }
}
