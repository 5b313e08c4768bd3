/// What crosses a simulated link: the remote protocol's messages, reduced to what the invariants
/// need (the wire's encoding is tested elsewhere; the simulator tests the protocol's logic).
enum SimulatedMessage {
    // Worker → parent.
    case hello(worker: Int, instance: Int)
    case outputs(
        child: UInt64, epoch: UInt64, number: UInt64, causes: [UInt64], acknowledged: UInt64?, snapshot: CounterSnapshot?, released: Bool)
    case rendering(child: UInt64, epoch: UInt64)
    /// The worker asks to leave (DRAIN), and says it left (GOODBYE).
    case drain
    case goodbye
    // Parent → worker.
    case welcome
    case reconnect
    /// `base`: the last event the snapshot includes, as the parent's machine computed it (the
    /// START header's acknowledgement).
    case start(child: UInt64, epoch: UInt64, snapshot: CounterSnapshot, base: UInt64)
    case events(child: UInt64, epoch: UInt64, first: UInt64, count: Int)
    case stop(child: UInt64, epoch: UInt64)
    /// Asks for a child's final flush (a drain); then the answer to DRAIN, after every RELEASE.
    case release(child: UInt64, epoch: UInt64)
    case drainAnswer
    // Both ways.
    case heartbeat
}

/// A simulated child's whole state: the last event it applied, and how many it applied (a
/// lineage applies each event exactly once and in order, so the two are equal).
struct CounterSnapshot: Equatable {
    var applied: UInt64 = 0
    var count: UInt64 = 0
}

/// One connection between a worker's socket and the parent, as ZeroMQ over TCP behaves: each
/// direction delivers in order after a delay; a disconnect loses what is in flight (libzmq then
/// reconnects by itself, on the same socket); a partition holds a direction's messages until it
/// heals; a socket closed (a worker's reconnection on a fresh socket, a crash) loses everything.
final class SimulatedConnection {
    typealias Instant = ContinuousClock.Instant

    let id: Int
    let worker: Int
    /// When the handshake completes (both directions must be open by then).
    var handshakeAt: Instant
    var handshakeDone = false
    var isClosed = false
    /// Disconnected until then: libzmq reconnects the same socket by itself, and the worker's
    /// monitor then reports a new handshake (`rehandshakePending`).
    private(set) var downUntil: Instant?
    /// The new handshake after a disconnect, not yet read by the worker.
    var rehandshakePending = false
    private(set) var toWorker = SimulationQueue<(at: Instant, message: SimulatedMessage)>()
    private(set) var toParent = SimulationQueue<(at: Instant, message: SimulatedMessage)>()
    /// Delivered, not read yet (the receiving socket's queue).
    var arrivedAtWorker = SimulationQueue<SimulatedMessage>()
    var arrivedAtParent = SimulationQueue<SimulatedMessage>()
    /// The latest delivery time per direction, so a later message never overtakes an earlier one.
    private var lastToWorker: Instant
    private var lastToParent: Instant

    init(id: Int, worker: Int, handshakeAt: Instant) {
        self.id = id
        self.worker = worker
        self.handshakeAt = handshakeAt
        lastToWorker = handshakeAt
        lastToParent = handshakeAt
    }

    func sendToWorker(_ message: SimulatedMessage, at now: Instant, delay: Duration) {
        // The parent's ROUTER drops what it sends to a peer that is not connected.
        guard !isClosed, !isDown(at: now) else { return }
        lastToWorker = max(lastToWorker, now + delay)
        toWorker.append((lastToWorker, message))
    }

    func sendToParent(_ message: SimulatedMessage, at now: Instant, delay: Duration) {
        guard !isClosed else { return }
        // The worker's DEALER queues what it sends while disconnected, and sends it once connected.
        lastToParent = max(lastToParent, now + delay, downUntil ?? now)
        toParent.append((lastToParent, message))
    }

    /// Moves what is due into the receivers' queues, unless a partition holds that direction.
    func deliver(at now: Instant, toWorkerBlocked: Bool, toParentBlocked: Bool) {
        guard !isDown(at: now) else { return }
        if !toWorkerBlocked {
            while let next = toWorker.first, next.at <= now { arrivedAtWorker.append(toWorker.popFirst()!.message) }
        }
        if !toParentBlocked {
            while let next = toParent.first, next.at <= now { arrivedAtParent.append(toParent.popFirst()!.message) }
        }
    }

    /// A TCP disconnect: what is in flight either way is lost; the socket reconnects at
    /// `reconnectAt` and its worker then learns of a new handshake.
    func disconnect(reconnectAt: Instant) {
        dropInFlight()
        guard handshakeDone else { return }
        downUntil = reconnectAt
        lastToParent = max(lastToParent, reconnectAt)
        lastToWorker = max(lastToWorker, reconnectAt)
        rehandshakePending = true
    }

    func isDown(at now: Instant) -> Bool {
        guard let downUntil else { return false }
        return downUntil > now
    }

    /// The parent's process ended (a nested worker crashed or left) and starts again at
    /// `restartsAt`: what it had received unread is gone with it, what is in flight is lost, and
    /// the worker's socket reconnects by itself once a new process binds (a new handshake).
    func parentEnded(restartsAt: Instant) {
        arrivedAtParent.removeAll()
        if handshakeDone {
            disconnect(reconnectAt: restartsAt)
        } else {
            dropInFlight()
            handshakeAt = max(handshakeAt, restartsAt)
        }
    }

    /// What is in flight is lost.
    func dropInFlight() {
        toWorker.removeAll()
        toParent.removeAll()
    }

    /// The socket closed: nothing more crosses, and nothing queued is read.
    func close() {
        isClosed = true
        dropInFlight()
        arrivedAtWorker.removeAll()
        arrivedAtParent.removeAll()
    }

    /// Messages held anywhere on this connection (for the bound on memory).
    var held: Int { toWorker.count + toParent.count + arrivedAtWorker.count + arrivedAtParent.count }
}
