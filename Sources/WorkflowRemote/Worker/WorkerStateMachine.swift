/// The worker role's protocol logic, without I/O: what a worker hosting children for a parent
/// does with each thing that happens to it, and what it decides to do in return.
///
/// It reads no clock, touches no socket and calls no hosted child: every input carries the time
/// it happened at (`at now:`), and every decision is returned (a child to stop, a heartbeat or a
/// HELLO to send, a flush to send, an event to apply or not). The worker role's driver
/// (`WorkerDriver.swift` and its extensions) feeds it from the loop's sockets and performs what
/// it returns; the deterministic simulator in the tests feeds the same code from a virtual clock and
/// a seeded scheduler, which is how its guarantees are checked under every fault interleaving.
///
/// `Child` is what the driver hosts for each placement (the driver's `AnyHostedChild`, a
/// simulated counter in the tests); the machine only stores it beside the placement's epoch and
/// its applied and acknowledged events, and hands it back when the driver has to act on it.
///
/// The rules it owns:
/// - **The lease** (fencing, the worker's half): once it has neither heard from nor sent to its
///   parent for the liveness window, it applies nothing more, checked before every event
///   (`nextEvent(of:at:)`) and before every job (`silenceBeyondLease(at:)`); its children stop
///   and it rejoins (`fence(at:)`).
/// - **Epochs**: a message about a child names the placement it is for; one for another
///   placement is refused or dropped.
/// - **Flushes**: a child's outputs (each tagged with the event that caused it), the rendering
///   after them and the cumulative acknowledgement with its snapshot leave together
///   (`flush(_:releasing:)`), children in the order they first produced something.
/// - **Heartbeats and silence** (`tick(at:)`), the handshake (`handshakeSucceeded(at:)`),
///   the drain (`beginDrain`, `release`, `drainAnswered`).
struct WorkerStateMachine<Child> {
    typealias Instant = ContinuousClock.Instant

    /// What the machine needs to know of the runtime's configuration.
    struct Configuration: Sendable {
        let heartbeatInterval: Duration
        let heartbeatLiveness: Int
        /// How many children it hosts at most (a START beyond is refused).
        let capacity: Int
        /// Whether this runtime has a parent at all (a root process has none: no lease, no
        /// heartbeats upstream).
        let hasParent: Bool
        /// How many endpoints the parent has: more than one for a leader with standbys
        /// (`RemoteRuntimeConfiguration.alternateParentEndpoints`), of which only the leader binds.
        let parentEndpoints: Int
        /// How long a silence the lease and the parent's liveness rule tolerate. Stored: the
        /// lease is checked before every event, and multiplying a `Duration` costs hundreds of
        /// instructions.
        let liveness: Duration
        /// How long a slice of the parent's messages lasts at most: half a heartbeat interval, so
        /// slow actions never keep the flush (and with it the parent's sign of life) waiting
        /// until the parent's liveness window runs out. Stored, as `liveness` is.
        let sliceLength: Duration
        /// The protocol's checks (all on, but in the simulator's tests of them).
        let checks: ProtocolChecks

        init(
            heartbeatInterval: Duration, heartbeatLiveness: Int, capacity: Int, hasParent: Bool, parentEndpoints: Int = 1,
            checks: ProtocolChecks = ProtocolChecks()
        ) {
            self.heartbeatInterval = heartbeatInterval
            self.heartbeatLiveness = heartbeatLiveness
            self.capacity = capacity
            self.hasParent = hasParent
            self.parentEndpoints = parentEndpoints
            liveness = heartbeatInterval * heartbeatLiveness
            sliceLength = heartbeatInterval / 2
            self.checks = checks
        }
    }

    /// A child hosted here for one placement.
    struct Hosted {
        let childID: UInt64
        var child: Child
        /// The placement's fencing token (from its START).
        let epoch: UInt64
        let path: String
        /// The last event applied.
        var applied: UInt64 = 0
        /// Whether the event after `applied` is the placement's next one for certain: its START
        /// said where the snapshot ends, or it applied an event since.
        var knowsNextEvent = true
        /// The last event acknowledged to the parent.
        var acknowledged: UInt64 = 0
        /// OUTPUTS messages sent for this placement (`numberOutputsMessage`).
        var outputsMessages: UInt64 = 0
    }

    /// A child's latest rendering since its last flush (only the latest is sent).
    struct PendingRendering {
        var bytes: [UInt8]
        var sequence: UInt64
        var path: String
    }

    let configuration: Configuration

    // MARK: State

    // One value per concept, each with storage private to its file and changed only by its
    // methods, named for what happened: the hosted children and their events (`Hosting`) and
    // what waits to be flushed (`PendingFlush`) in `WorkerStateMachine+Events.swift`, the link to
    // the parent (`ParentLink`) in `+Link`, the departure (`Leaving`) in `+Drain`. The values are
    // internal, since the machine's extensions in the sibling files call their methods (Swift's
    // `private` does not reach another file); the drivers only read them.

    /// The children hosted here and where each is in its events.
    var hosting: Hosting
    /// What the children produced since their last flush.
    var pending = PendingFlush()
    /// The link to the parent: handshake, WELCOME, the last message each way, reconnections.
    var link: ParentLink
    /// Whether the parent welcomed this worker (and has not forgotten it since, as far as it knows).
    var isWelcomed: Bool { link.isWelcomed }
    /// Reconnections since the parent last welcomed this worker (for exponential back-off).
    var reconnectAttempts: Int { link.reconnectAttempts }
    /// The departure: a drain in progress, the RELEASEs held, the shutdown.
    var leaving = Leaving()
    /// Whether the runtime stops (no lease, heartbeats or reconnection any more).
    var isShuttingDown: Bool { leaving.isShuttingDown }
    /// Set once a drain began: a silent parent then ends the drain instead of a reconnection.
    var isLeaving: Bool { leaving.isLeaving }

    init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        link = ParentLink(at: now)
        hosting = Hosting(sliceEnds: now + configuration.sliceLength)
    }

    /// The hosted child of `childID` if it belongs to the placement `epoch`.
    ///
    /// `mutating`, like `sliceContinues`, though it changes nothing: the driver holds the machine
    /// in a class's property, where a non-mutating call first copies the whole machine (a
    /// thousand instructions per message, measured), while a mutating one works in place.
    mutating func child(_ childID: UInt64, epoch: UInt64) -> Child? {
        guard let hosted = hosting.children[childID], hosted.epoch == epoch else { return nil }
        return hosted.child
    }

    /// What the machine holds beyond its children, for the simulator's bound on memory.
    var pendingCount: Int {
        pending.count + hosting.needsRender.count + leaving.deferredReleases.count
    }

    /// What the machine holds, for the simulator's bound on memory.
    var memory: Int { hosting.children.count + pendingCount }

    // MARK: The connection

    /// Any message from the parent arrived: it is alive, and the connection proven.
    mutating func heardFromParent(at now: Instant) {
        link.heard(at: now)
    }

    /// A message left for the parent.
    mutating func sentToParent(at now: Instant) {
        link.sent(at: now)
    }

    /// What a message that no connection took means.
    enum SendFailure: Equatable {
        /// No connection yet (or its handshake failed): expected; a HELLO goes again on the next
        /// handshake.
        case notConnectedYet
        /// The connection is gone or its queue full: the message is lost (worth a warning).
        case dropped
    }

    mutating func sendFailed(hello: Bool) -> SendFailure {
        link.sendFailed(hello: hello)
    }

    /// WELCOME: the parent counts on this worker. `startsCarryBase`: its STARTs say which event
    /// their snapshot includes, 0 included (`WelcomePayload.startsCarryBase`).
    mutating func welcomed(drains: Bool, startsCarryBase: Bool) {
        link.welcomed(drains: drains, startsCarryBase: startsCarryBase)
    }

    /// What the driver does after a handshake succeeded.
    struct Handshake {
        var sendHello: Bool
        /// Trouble was reported before: say the connection recovered.
        var recovered: Bool
        /// The connection of a welcomed worker was re-established: rejoin (`Fence`).
        var fence: Fence? = nil
    }

    mutating func handshakeSucceeded(at now: Instant) -> Handshake {
        // A welcomed worker's connection came back: libzmq reconnected the same socket after a
        // disconnect, and whatever was in flight either way is lost (the parent's ROUTER drops
        // what it sends to a peer that is not connected). Nothing later need reveal the loss:
        // the last EVENT of a burst, or the last OUTPUTS, would be missing for good. So the
        // worker rejoins as when it finds input lost: its children are placed again from their
        // last acknowledged state and their unacknowledged events replayed.
        if link.isWelcomed {
            let recovered = link.reestablished()
            guard configuration.checks.workerRejoinsOnReconnect else { return Handshake(sendHello: false, recovered: recovered) }
            return Handshake(sendHello: false, recovered: recovered, fence: fence(silence: .zero, at: now))
        }
        return link.connected(at: now)
    }

    mutating func handshakeFailed(at now: Instant) {
        link.failedHandshake()
    }

    /// libzmq retries connecting; returns whether that is news worth a line.
    mutating func connectRetried() -> Bool {
        link.retriedConnecting()
    }

    /// The connection to the parent closed (the monitor's `disconnected`: the parent's process
    /// died, or its side closed it). A welcomed worker of a parent with several endpoints (a
    /// leader and its standbys) takes it as the sign a standby is taking over and moves on to
    /// the next endpoint at once, rather than after the liveness window of silence: a parent that
    /// lives and takes the connection back would be moved on from all the same, when its
    /// handshake succeeds (`handshakeSucceeded(at:)`). `nil` otherwise: with one endpoint libzmq
    /// reconnects and the rejoin follows the handshake; before the WELCOME the silence rule covers it.
    mutating func connectionClosed(at now: Instant) -> Fence? {
        guard configuration.hasParent, configuration.parentEndpoints > 1, link.isWelcomed, link.connectedAt != nil, !isShuttingDown else { return nil }
        return fence(silence: .zero, at: now)
    }

    /// An ERROR from the parent (`correlationID`; `refusal`: what it says if its code refuses a
    /// join, name taken or refused): whether it answers this worker's HELLO. Only an error about
    /// no request (`correlationID` 0) before the WELCOME does; the worker then keeps asking with
    /// back-off (the silence rule). Any other is only reported (`nil`).
    func joinRefusal(correlationID: UInt64, refusal: JoinRefusal?) -> JoinRefusal? {
        guard correlationID == 0, !isWelcomed else { return nil }
        return refusal
    }

    /// RECONNECT: the parent does not know this connection. Returns the children to stop (and a
    /// drain that ended) when the worker joins again with HELLO; `nil` when it ignores it (not
    /// welcomed yet: the HELLO already sent is still to be answered).
    mutating func reconnectRequested() -> Forgotten? {
        guard isWelcomed else { return nil }
        return forgetChildren()
    }

    // MARK: Timers

    /// What the heartbeat timer asks of the driver.
    struct Tick {
        var sendHeartbeat = false
        var fence: Fence?
    }

    /// Heartbeats and the silence rule: a heartbeat on a link left idle for an interval; a parent
    /// silent for the liveness window (plus the back-off) makes the worker reconnect, or, while
    /// it leaves, stop its children.
    mutating func tick(at now: Instant) -> Tick {
        var tick = Tick()
        guard configuration.hasParent, !isShuttingDown else { return tick }
        let interval = configuration.heartbeatInterval
        // Not while a HELLO is unanswered or refused: the parent would only answer RECONNECT,
        // and that answer would keep the silence rule (the back-off retry) from firing.
        if link.isWelcomed, now - link.lastSent >= interval { tick.sendHeartbeat = true }
        // With several parent endpoints (a leader and its standbys) the back-off grows per round
        // of them all, and an endpoint that cannot be reached at all (a standby binds nothing)
        // counts as silent: the worker moves on to the next after one window.
        let backoff = interval * (1 << min(link.reconnectAttempts / max(configuration.parentEndpoints, 1), 5))
        let unreachable = configuration.parentEndpoints > 1 && link.connectedAt == nil && !link.handshakeFailed
        // Only once this socket's handshake has succeeded, or failed: while it is in progress
        // there is no parent to be silent. Until the parent has welcomed this worker, its answer
        // may take several round trips on a lossy link: four windows.
        let window = link.isWelcomed || unreachable ? configuration.liveness : configuration.liveness * 4
        if link.connectedAt != nil || link.handshakeFailed || unreachable, now - link.lastHeard > window + backoff {
            tick.fence = fence(silence: now - link.lastHeard, at: now)
        }
        return tick
    }
}
