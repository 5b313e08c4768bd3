/// One connection between a worker's socket and the parent's listener, as ZeroMQ over TCP
/// behaves: each direction delivers whole messages in order after a delay; a disconnect loses
/// what is in flight and the worker's socket reconnects by itself (its monitor reports the
/// disconnect, then a new handshake); a partition holds a direction until it heals; a socket
/// closed (a fresh one after a fence, a crash) loses everything and never carries again.
final class SimulatedLink {
    typealias Instant = ContinuousClock.Instant
    typealias Frames = [[UInt8]]

    /// Its routing id at the parent (the worker's socket's identity).
    let routingID: [UInt8]
    let worker: Int
    /// The process whose listener it connects to (`DriverNetwork.topParent`, or a nested
    /// worker's index).
    let parent: Int
    /// When the (next) handshake completes.
    var handshakeAt: Instant
    private(set) var isUp = false
    private(set) var isClosed = false
    /// Monitor events for the worker not read yet.
    var events: [SimulatedConnectionEvent] = []
    private var toParent = SimulationQueue<(at: Instant, frames: Frames)>()
    private var toWorker = SimulationQueue<(at: Instant, frames: Frames)>()
    /// Delivered and not read yet (each side's socket queue).
    var arrivedAtParent = SimulationQueue<Frames>()
    var arrivedAtWorker = SimulationQueue<Frames>()
    /// Held by the worker's socket while the connection is down (a DEALER queues them).
    private var queuedWhileDown: [Frames] = []
    private var lastToParent: Instant
    private var lastToWorker: Instant
    /// Partitions: a direction that holds its messages until it heals.
    var toParentBlocked = false
    var toWorkerBlocked = false

    init(routingID: [UInt8], worker: Int, parent: Int, handshakeAt: Instant) {
        self.routingID = routingID
        self.worker = worker
        self.parent = parent
        self.handshakeAt = handshakeAt
        lastToParent = handshakeAt
        lastToWorker = handshakeAt
    }

    /// Completes a due handshake (and releases what the worker queued meanwhile).
    func advance(to now: Instant, delay: () -> Duration) {
        guard !isClosed else { return }
        if !isUp, now >= handshakeAt, !toParentBlocked, !toWorkerBlocked {
            isUp = true
            events.append(.handshakeSucceeded)
            for frames in queuedWhileDown { send(toParent: frames, at: now, delay: delay()) }
            queuedWhileDown.removeAll()
        }
        guard isUp else { return }
        if !toParentBlocked {
            while let next = toParent.first, next.at <= now { arrivedAtParent.append(toParent.popFirst()!.frames) }
        }
        if !toWorkerBlocked {
            while let next = toWorker.first, next.at <= now { arrivedAtWorker.append(toWorker.popFirst()!.frames) }
        }
    }

    /// The parent's ROUTER sends: only on a connection that is up (`false`: the peer is not
    /// connected, EHOSTUNREACH).
    func send(toWorker frames: Frames, at now: Instant, delay: Duration) -> Bool {
        guard isUp, !isClosed else { return false }
        lastToWorker = max(lastToWorker, now + delay)
        toWorker.append((lastToWorker, frames))
        return true
    }

    /// The worker's DEALER sends: queued while the connection is down, sent once it is up.
    func send(toParent frames: Frames, at now: Instant, delay: Duration) {
        guard !isClosed else { return }
        guard isUp else {
            queuedWhileDown.append(frames)
            return
        }
        lastToParent = max(lastToParent, now + delay)
        toParent.append((lastToParent, frames))
    }

    /// A TCP disconnect: what is in flight either way is lost, the monitor says so, and the
    /// socket reconnects by itself at `reconnectAt`.
    func disconnect(reconnectAt: Instant) {
        guard isUp, !isClosed else { return }
        isUp = false
        toParent.removeAll()
        toWorker.removeAll()
        events.append(.disconnected)
        handshakeAt = reconnectAt
        lastToParent = reconnectAt
        lastToWorker = reconnectAt
    }

    /// The worker's socket closed: nothing more crosses.
    func close() {
        isClosed = true
        isUp = false
        toParent.removeAll()
        toWorker.removeAll()
        arrivedAtParent.removeAll()
        arrivedAtWorker.removeAll()
        queuedWhileDown.removeAll()
        events.removeAll()
    }

    /// Messages held anywhere on this link.
    var held: Int { toParent.count + toWorker.count + arrivedAtParent.count + arrivedAtWorker.count + queuedWhileDown.count }
}

/// What a worker's socket monitor reports of its link.
enum SimulatedConnectionEvent {
    case handshakeSucceeded
    case disconnected
}
