/// The parent role, modelled as simply as the worker's invariants need: it welcomes workers,
/// places each child on one, sends it events (numbered from 1, at most `window` unacknowledged),
/// takes the flushes' outputs and acknowledgements, heartbeats, declares a silent worker dead
/// and moves its children (a new epoch, the last acknowledged snapshot, the unacknowledged
/// events replayed), as the engine's parent role does.
final class SimulatedParent {
    typealias Instant = ContinuousClock.Instant

    struct Peer {
        let connection: SimulatedConnection
        let worker: Int
        var lastHeard: Instant
        var lastSent: Instant
        /// It asked to drain: nothing new is placed on it.
        var isDraining = false
    }

    struct Child {
        let id: UInt64
        var epoch: UInt64 = 0
        /// The connection id of the worker hosting the current placement.
        var host: Int?
        /// When the current placement was sent; its first flush is awaited until the deadline.
        var placedAt: Instant?
        var answered = false
        var acknowledged = CounterSnapshot()
        /// The next event's sequence (events are numbered from 1).
        var nextSequence: UInt64 = 1
        /// The last event sent to the current placement.
        var sentThrough: UInt64 = 0
        /// The last output taken (each event emits one, tagged with it).
        var lastOutput: UInt64 = 0
        /// The number of the last OUTPUTS message taken from the current placement.
        var outputsMessages: UInt64 = 0
        /// Its worker drains: RELEASE sent, its final flush awaited; events wait here meanwhile.
        var isReleasing = false
    }

    static let window: UInt64 = 64
    let interval: Duration
    let deadAfter: Duration
    let requestTimeout: Duration
    private(set) var peers: [Int: Peer] = [:]
    private(set) var children: [Child]
    /// Whether the parent keeps making events (off for the quiet end of a run).
    var generating = true

    init(children: Int, interval: Duration, liveness: Int) {
        self.interval = interval
        deadAfter = interval * liveness
        requestTimeout = interval * (liveness * 3)
        self.children = (1...children).map { Child(id: UInt64($0)) }
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

    private func handle(_ message: SimulatedMessage, on connection: SimulatedConnection, at now: Instant, in world: Simulation) {
        if case .hello(let worker, _) = message {
            // The same worker joining again (a fresh socket, a restart): its old connection ends.
            for (id, peer) in peers where peer.worker == worker && id != connection.id { removePeer(id, at: now, in: world) }
            peers[connection.id] = Peer(connection: connection, worker: worker, lastHeard: now, lastSent: now)
            send(.welcome, to: connection.id, at: now, in: world)
            return
        }
        guard peers[connection.id] != nil else {
            // A connection the parent does not know: it says so, and the worker joins again.
            if !connection.isClosed { connection.sendToWorker(.reconnect, at: now, delay: world.delay()) }
            return
        }
        peers[connection.id]!.lastHeard = now
        switch message {
        case .outputs(let childID, let epoch, let number, let causes, let acknowledged, let snapshot, let released):
            guard let index = children.firstIndex(where: { $0.id == childID }), children[index].host == connection.id,
                children[index].epoch == epoch
            else { return }
            // As the engine's parent (`outputsMessageInOrder`): a number skipped means messages
            // were lost in transit; the worker is treated as gone.
            guard number == 0 || number == children[index].outputsMessages + 1 || !world.parentChecksOutputsNumbers else {
                removePeer(connection.id, at: now, in: world)
                return
            }
            if number > 0 { children[index].outputsMessages = number }
            children[index].answered = true
            for cause in causes where cause > children[index].lastOutput {
                if cause != children[index].lastOutput + 1 {
                    world.violation("child \(childID): output of event \(cause) after \(children[index].lastOutput): outputs lost")
                }
                children[index].lastOutput = cause
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
                if children[index].lastOutput < acknowledged {
                    world.violation("child \(childID): acknowledged \(acknowledged), outputs through \(children[index].lastOutput) only")
                }
                children[index].acknowledged = snapshot
            }
            if released, children[index].isReleasing {
                // The final flush: every event sent is in its snapshot (checked above when it
                // acknowledged them); the child moves on from it.
                if children[index].acknowledged.applied != children[index].sentThrough {
                    world.violation(
                        "child \(childID): released after \(children[index].acknowledged.applied) of \(children[index].sentThrough) events sent")
                }
                children[index].isReleasing = false
                children[index].host = nil
                world.count.released += 1
                place(index, at: now, in: world)
            }
        case .rendering(let childID, let epoch):
            if let index = children.firstIndex(where: { $0.id == childID }), children[index].host == connection.id, children[index].epoch == epoch {
                children[index].answered = true
            }
        case .drain:
            if !peers[connection.id]!.isDraining {
                peers[connection.id]!.isDraining = true
                for index in children.indices where children[index].host == connection.id {
                    children[index].isReleasing = true
                    send(.release(child: children[index].id, epoch: children[index].epoch), to: connection.id, at: now, in: world)
                }
            }
            send(.drainAnswer, to: connection.id, at: now, in: world)
        case .goodbye:
            removePeer(connection.id, at: now, in: world)
        case .heartbeat:
            break
        default:
            world.violation("the parent received a parent's message")
        }
    }

    private func timers(at now: Instant, in world: Simulation) {
        for (id, peer) in peers.sorted(by: { $0.key < $1.key }) {
            if now - peer.lastHeard > deadAfter {
                removePeer(id, at: now, in: world)
            } else if now - peer.lastSent >= interval {
                send(.heartbeat, to: id, at: now, in: world)
            }
        }
        for index in children.indices {
            // No answer to START within the request deadline: the copy is stopped, placed again.
            if let host = children[index].host, !children[index].answered, let placedAt = children[index].placedAt,
                now - placedAt > requestTimeout
            {
                send(.stop(child: children[index].id, epoch: children[index].epoch), to: host, at: now, in: world)
                children[index].host = nil
            }
            if children[index].host == nil { place(index, at: now, in: world) }
            if generating, children[index].nextSequence - 1 - children[index].acknowledged.applied < Self.window, world.random.chance(0.5) {
                let room = Self.window - (children[index].nextSequence - 1 - children[index].acknowledged.applied)
                children[index].nextSequence += UInt64(world.random.int(in: 1...Int(min(room, 8))))
            }
            sendEvents(index, at: now, in: world)
        }
    }

    private func place(_ index: Int, at now: Instant, in world: Simulation) {
        let candidates = peers.filter { !$0.value.isDraining }.keys.sorted()
        guard !candidates.isEmpty else { return }
        let host = candidates[world.random.int(in: 0...(candidates.count - 1))]
        children[index].epoch += 1
        children[index].host = host
        children[index].placedAt = now
        children[index].answered = false
        children[index].sentThrough = children[index].acknowledged.applied
        children[index].outputsMessages = 0
        children[index].isReleasing = false
        world.moved(children[index].id, toEpoch: children[index].epoch)
        send(.start(child: children[index].id, epoch: children[index].epoch, snapshot: children[index].acknowledged), to: host, at: now, in: world)
        sendEvents(index, at: now, in: world)
    }

    private func sendEvents(_ index: Int, at now: Instant, in world: Simulation) {
        guard let host = children[index].host, !children[index].isReleasing else { return }
        let first = children[index].sentThrough + 1
        let last = children[index].nextSequence - 1
        guard first <= last else { return }
        send(.events(child: children[index].id, epoch: children[index].epoch, first: first, count: Int(last - first + 1)), to: host, at: now, in: world)
        children[index].sentThrough = last
    }

    private func removePeer(_ id: Int, at now: Instant, in world: Simulation) {
        peers[id] = nil
        for index in children.indices where children[index].host == id {
            children[index].host = nil
            children[index].isReleasing = false
            place(index, at: now, in: world)
        }
    }

    private func send(_ message: SimulatedMessage, to id: Int, at now: Instant, in world: Simulation) {
        guard let peer = peers[id] else { return }
        peer.connection.sendToWorker(message, at: now, delay: world.delay())
        peers[id]!.lastSent = now
    }

    /// Whether every event made so far is acknowledged.
    var isSettled: Bool { children.allSatisfy { $0.acknowledged.applied == $0.nextSequence - 1 } }

    var memory: Int { peers.count }
}
