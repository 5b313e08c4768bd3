@testable import WorkflowRemote

/// The parent process: the parent role's real state machine (`ParentStateMachine`) decides who
/// joins, who is alive, which children each worker hosts and what becomes of them when it drains
/// or leaves, and whether OUTPUTS arrive without a gap, driven the way the parent's driver
/// (`ParentDriver`) drives it, and keeps each child's record as the driver's does (its epochs,
/// how far its events went, which outputs were delivered: `ParentStateMachine+Placement.swift`
/// and `+Events`). What each child's
/// proxy keeps is modelled here as simply as the invariants need: events numbered from 1 (at most
/// `window` unacknowledged), the acknowledgements, placements (the last acknowledged snapshot, the
/// unacknowledged events replayed), as the engine's proxies do.
///
/// A nested worker (a worker that is also a parent) runs one of these beside its worker role, in
/// the same process: its children's events are made on demand, one per event its own hosted
/// children apply (`eventsOnDemand`), and it shares the process's pauses, crashes and departures.
final class SimulatedParent {
    typealias Instant = ContinuousClock.Instant

    struct Child {
        let id: UInt64
        /// The connection id of the worker hosting the current placement.
        var host: Int?
        /// When the current placement was sent; its first flush is awaited until the deadline.
        var placedAt: Instant?
        var answered = false
        var acknowledged = CounterSnapshot()
        /// The next event's sequence (events are numbered from 1).
        var nextSequence: UInt64 = 1
        /// The last event sent to any placement (the machine keeps the current placement's).
        var sentThrough: UInt64 = 0
        /// Its worker drains: RELEASE sent, its final flush awaited; events wait here meanwhile.
        var isReleasing = false
        /// Events asked for and not made yet (`eventsOnDemand`).
        var demand: UInt64 = 0
    }

    static let window: UInt64 = 64
    let interval: Duration
    let requestTimeout: Duration
    /// The parent role's real state machine.
    private(set) var machine: ParentStateMachine
    /// The connections of the joined workers, by connection id.
    private var joined: [Int: SimulatedConnection] = [:]
    private(set) var children: [Child]
    /// Whether the parent keeps making events (off for the quiet end of a run).
    var generating = true
    /// Whether events are made only as asked (`demand(from:)`): a nested worker's parent role,
    /// whose children's events come from what its own hosted children apply.
    let eventsOnDemand: Bool

    /// - Parameter deadlinesAcknowledgements: whether events left unacknowledged past the request
    ///   deadline count as lost (off: practically never).
    init(childIDs: [UInt64], interval: Duration, liveness: Int, deadlinesAcknowledgements: Bool = true, eventsOnDemand: Bool = false) {
        self.eventsOnDemand = eventsOnDemand
        self.interval = interval
        requestTimeout = interval * (liveness * 3)
        machine = ParentStateMachine(
            configuration: .init(
                heartbeatInterval: interval, heartbeatLiveness: liveness,
                acknowledgementDeadline: deadlinesAcknowledgements ? requestTimeout : .seconds(1_000_000_000)))
        children = childIDs.map { Child(id: $0) }
        for child in children { machine.childAdded(child.id) }
    }

    /// One step: a message read, or the timers, placements and new events.
    func step(at now: Instant, connections: [SimulatedConnection], in world: Simulation) {
        let start = world.random.int(in: 0...max(0, connections.count - 1))
        for offset in 0..<connections.count {
            let connection = connections[(start + offset) % connections.count]
            if let message = connection.arrivedAtParent.popFirst() {
                handle(message, on: connection, at: now, in: world)
                return
            }
        }
        timers(at: now, in: world)
    }

    /// A connection as the machine names it (the engine's ROUTER routing id).
    static func workerID(_ connection: Int) -> WorkerID {
        WorkerID(bytes: withUnsafeBytes(of: UInt64(connection).littleEndian) { Array($0) })
    }

    static func connectionID(_ id: WorkerID) -> Int {
        Int(id.bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    private func handle(_ message: SimulatedMessage, on connection: SimulatedConnection, at now: Instant, in world: Simulation) {
        let id = Self.workerID(connection.id)
        if case .hello(let worker, let instance) = message {
            let (name, instance) = ("worker-\(worker)", "\(instance)")
            var admission = machine.admit(name: name, instance: instance, from: id)
            if case .probe(let existing) = admission {
                // As the engine: a send to a connection that is gone fails at once and removes it.
                if joined[Self.connectionID(existing)]?.isClosed ?? true {
                    removePeer(existing, at: now, in: world)
                } else {
                    send(.heartbeat, to: existing, at: now, in: world)
                }
                admission = machine.admit(name: name, instance: instance, from: id, probed: true)
            }
            switch admission {
            case .welcomeAgain:
                break
            case .join(let replacing):
                // The same worker joining again (a fresh socket): its old connection ends.
                if let replacing { removePeer(replacing, at: now, in: world) }
                joined[connection.id] = connection
                machine.join(id, as: .init(name: name, pool: "", instance: instance, hostedTypes: ["counter"], joinedAt: now))
            case .refuseRenaming, .refuseNameTaken, .probe:
                // Refused: the worker asks again after its liveness window.
                return
            }
            send(.welcome, to: id, at: now, in: world)
            return
        }
        guard machine.workers[id] != nil else {
            // A connection the parent does not know: it says so, and the worker joins again.
            if !connection.isClosed { connection.sendToWorker(.reconnect, at: now, delay: world.delay()) }
            return
        }
        machine.heard(from: id, at: now)
        switch message {
        case .outputs(let childID, let epoch, let number, let causes, let acknowledged, let snapshot, let released):
            guard let index = children.firstIndex(where: { $0.id == childID }), children[index].host == connection.id,
                machine.epoch(of: childID) == epoch
            else { return }
            // As the engine's parent (`outputsMessageInOrder`): a number skipped means messages
            // were lost in transit; the worker is treated as gone.
            if world.parentChecksOutputsNumbers, case .lost = machine.outputsMessage(childID: childID, epoch: epoch, number: number) {
                removePeer(id, at: now, in: world)
                return
            }
            children[index].answered = true
            // Each event emits one output, tagged with it: the machine's order drops a replay's
            // duplicates, and what it takes must follow what it delivered without a gap.
            var last = machine.outputOrder(of: childID).map { ($0.partial ?? $0.delivered).cause } ?? 0
            let delivered = machine.outputsArrived(for: childID, causes: causes, ordinals: causes.map { _ in 0 }, continues: false)
            for (index, cause) in causes.enumerated() where delivered.contains(index) {
                if cause != last + 1 { world.violation("child \(childID): output of event \(cause) after \(last): outputs lost") }
                last = cause
            }
            if let acknowledged, acknowledged > children[index].acknowledged.applied {
                guard let snapshot, snapshot.applied == acknowledged else {
                    world.violation("child \(childID): acknowledgement \(acknowledged) without its snapshot")
                    return
                }
                if snapshot.count != snapshot.applied {
                    world.violation("child \(childID): \(snapshot.count) events applied for \(snapshot.applied): one applied twice or skipped")
                }
                if acknowledged > children[index].sentThrough {
                    world.violation("child \(childID): acknowledged \(acknowledged), sent through \(children[index].sentThrough)")
                }
                if lastOutput(of: childID) < acknowledged {
                    world.violation("child \(childID): acknowledged \(acknowledged), outputs through \(lastOutput(of: childID)) only")
                }
                children[index].acknowledged = snapshot
                machine.acknowledged(childID, coversAllSent: acknowledged >= machine.lastSentEvent(of: childID), at: now)
            }
            if released, children[index].isReleasing {
                // The final flush: every event sent is in its snapshot (checked above when it
                // acknowledged them); the child moves on from it.
                if children[index].acknowledged.applied != children[index].sentThrough {
                    world.violation(
                        "child \(childID): released after \(children[index].acknowledged.applied) of \(children[index].sentThrough) events sent")
                }
                _ = machine.released(childID, from: id, canMoveAtOnce: true)
                children[index].isReleasing = false
                children[index].host = nil
                world.count.released += 1
                place(index, at: now, in: world)
            }
        case .rendering(let childID, let epoch):
            if let index = children.firstIndex(where: { $0.id == childID }), children[index].host == connection.id, machine.epoch(of: childID) == epoch {
                children[index].answered = true
            }
        case .drain:
            let placedThere = children.filter { $0.host == connection.id }.map(\.id)
            for childID in machine.drainRequested(by: id, placedThere: placedThere).releases {
                guard let index = children.firstIndex(where: { $0.id == childID }) else { continue }
                children[index].isReleasing = true
                send(.release(child: childID, epoch: machine.epoch(of: childID)), to: id, at: now, in: world)
            }
            send(.drainAnswer, to: id, at: now, in: world)
        case .goodbye:
            removePeer(id, at: now, in: world)
        case .heartbeat:
            break
        default:
            world.violation("the parent received a parent's message")
        }
    }

    private func timers(at now: Instant, in world: Simulation) {
        for id in machine.workers.byConnection.keys.sorted(by: { Self.connectionID($0) < Self.connectionID($1) }) {
            switch machine.livenessAction(of: id, at: now) {
            case .declareDead, .declareLost: removePeer(id, at: now, in: world)
            case .sendHeartbeat: send(.heartbeat, to: id, at: now, in: world)
            case nil: break
            }
        }
        for index in children.indices {
            // No answer to START within the request deadline: the copy is stopped, placed again.
            if let host = children[index].host, !children[index].answered, let placedAt = children[index].placedAt,
                now - placedAt > requestTimeout
            {
                send(.stop(child: children[index].id, epoch: machine.epoch(of: children[index].id)), to: Self.workerID(host), at: now, in: world)
                machine.unplaced(children[index].id, from: Self.workerID(host))
                children[index].host = nil
            }
            if children[index].host == nil { place(index, at: now, in: world) }
            let unacknowledged = children[index].nextSequence - 1 - children[index].acknowledged.applied
            let room = unacknowledged < Self.window ? Self.window - unacknowledged : 0
            if generating, room > 0 {
                if eventsOnDemand {
                    let made = min(room, children[index].demand)
                    children[index].nextSequence += made
                    children[index].demand -= made
                } else if world.random.chance(0.5) {
                    children[index].nextSequence += UInt64(world.random.int(in: 1...Int(min(room, 8))))
                }
            }
            sendEvents(index, at: now, in: world)
        }
    }

    private func place(_ index: Int, at now: Instant, in world: Simulation) {
        let candidates = machine.workers.byConnection.filter { !$0.value.isDraining }.keys.map(Self.connectionID).sorted()
        guard !candidates.isEmpty else { return }
        let host = candidates[world.random.int(in: 0...(candidates.count - 1))]
        // As the engine's ledger: the snapshot covers every event before the first
        // unacknowledged one, all of them when none is (`ChildEventLedger.snapshotThrough`).
        let placement = machine.newPlacement(of: children[index].id, snapshotThrough: children[index].acknowledged.applied)
        children[index].host = host
        children[index].placedAt = now
        children[index].answered = false
        children[index].sentThrough = children[index].acknowledged.applied
        children[index].isReleasing = false
        machine.placed(children[index].id, on: Self.workerID(host))
        world.moved(children[index].id, toEpoch: placement.epoch)
        send(
            .start(child: children[index].id, epoch: placement.epoch, snapshot: children[index].acknowledged, base: placement.snapshotThrough), to: Self.workerID(host), at: now, in: world)
        sendEvents(index, at: now, in: world)
    }

    private func sendEvents(_ index: Int, at now: Instant, in world: Simulation) {
        guard let host = children[index].host, !children[index].isReleasing else { return }
        let first = children[index].sentThrough + 1
        let last = children[index].nextSequence - 1
        guard first <= last else { return }
        send(
            .events(child: children[index].id, epoch: machine.epoch(of: children[index].id), first: first, count: Int(last - first + 1)),
            to: Self.workerID(host), at: now, in: world)
        children[index].sentThrough = last
        machine.eventsSent(to: children[index].id, through: last, at: now)
    }

    private func removePeer(_ id: WorkerID, at now: Instant, in world: Simulation) {
        joined[Self.connectionID(id)] = nil
        guard let departure = machine.workerLeft(id) else { return }
        for (childID, after) in departure.children {
            guard let index = children.firstIndex(where: { $0.id == childID }), children[index].host == Self.connectionID(id) else { continue }
            // A child whose handover began moves on as planned, never shown unavailable, whichever
            // of its final flush and its worker's departure came first.
            if children[index].isReleasing, after != .moveOn {
                world.violation("child \(childID): its worker left during its handover and the parent failed it")
            }
            children[index].host = nil
            children[index].isReleasing = false
            place(index, at: now, in: world)
        }
    }

    private func send(_ message: SimulatedMessage, to id: WorkerID, at now: Instant, in world: Simulation) {
        guard let connection = joined[Self.connectionID(id)] else { return }
        connection.sendToWorker(message, at: now, delay: world.delay())
        machine.sent(to: id, at: now)
    }

    /// The last output delivered for `childID` (each event emits one, tagged with it).
    func lastOutput(of childID: UInt64) -> UInt64 {
        machine.children[childID]?.outputs.delivered.cause ?? 0
    }

    /// One more event for a child, asked for by an event that `causeID`, a child of this process's
    /// worker role, applied (`eventsOnDemand`).
    func demand(from causeID: UInt64) {
        children[Int(causeID % UInt64(children.count))].demand += 1
    }

    /// Whether every event made so far is acknowledged.
    var isSettled: Bool { children.allSatisfy { $0.acknowledged.applied == $0.nextSequence - 1 } }

    var memory: Int { machine.workers.count }
}
