/// The worker role's protocol logic, without I/O: what a worker hosting children for a parent
/// does with each thing that happens to it, and what it decides to do in return.
///
/// It reads no clock, touches no socket and calls no hosted child: every input carries the time
/// it happened at (`at now:`), and every decision is returned (a child to stop, a heartbeat or a
/// HELLO to send, a flush to send, an event to apply or not). The engine's worker driver
/// (`RemoteEngine+WorkerDriver.swift`) feeds it from the loop's sockets and performs what it
/// returns; the deterministic simulator in the tests feeds the same code from a virtual clock and
/// a seeded scheduler, which is how its guarantees are checked under every fault interleaving.
///
/// `Child` is what the driver hosts for each placement (the engine's `AnyHostedChild`, a
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

        init(heartbeatInterval: Duration, heartbeatLiveness: Int, capacity: Int, hasParent: Bool, parentEndpoints: Int = 1) {
            self.heartbeatInterval = heartbeatInterval
            self.heartbeatLiveness = heartbeatLiveness
            self.capacity = capacity
            self.hasParent = hasParent
            self.parentEndpoints = parentEndpoints
            liveness = heartbeatInterval * heartbeatLiveness
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

    /// A drain in progress: the parent was asked (DRAIN) to move this worker's children.
    struct Drain {
        let deadline: Instant
        /// Children hosted when the drain began, plus any a START in flight placed here meanwhile.
        var children: Int
        /// Children released: their final flush went to the parent and their copy here stopped.
        var handedOver = 0
        /// The parent answered while RELEASEs were deferred: the drain ends when they are answered.
        var answered = false
    }

    /// A RELEASE whose answer waits (a middle process with forwarded events unacknowledged).
    struct DeferredRelease: Equatable {
        let childID: UInt64
        let epoch: UInt64
        let path: String
    }

    let configuration: Configuration

    // MARK: State

    /// The children hosted here, by child id.
    private(set) var children: [UInt64: Hosted] = [:]
    /// Whether the parent welcomed this worker (and has not forgotten it since, as far as it knows).
    private(set) var isWelcomed = false
    /// Whether the parent's WELCOME said it understands DRAIN.
    private(set) var parentDrains = false
    /// When the current connection completed its handshake (`nil`: not yet).
    private(set) var connectedAt: Instant?
    /// Whether the current connection's handshake failed.
    private(set) var handshakeFailed = false
    /// Whether a HELLO found no connection to take it: sent again when a handshake succeeds.
    private(set) var helloPending = false
    /// Whether trouble with the connection was reported, so its recovery is reported once too.
    private(set) var connectionTrouble = false
    /// Reconnections since the parent last welcomed this worker (for exponential back-off).
    private(set) var reconnectAttempts = 0
    private(set) var lastHeard: Instant
    private(set) var lastSent: Instant
    private(set) var isShuttingDown = false
    /// Set once a drain began: a silent parent then ends the drain instead of a reconnection.
    private(set) var isLeaving = false
    private(set) var drain: Drain?
    private(set) var deferredReleases: [DeferredRelease] = []

    private var pendingRenderings: [UInt64: PendingRendering] = [:]
    private var pendingOutputs: [UInt64: PendingOutputs] = [:]
    /// The event being applied, to tag the outputs it causes.
    private var currentCause: (child: UInt64, sequence: UInt64, ordinal: UInt32)?
    /// Children with something to flush, in the order they first had it, and the same as a set.
    private var flushOrder: [UInt64] = []
    private var flushScheduled: Set<UInt64> = []
    /// Children that applied events without rendering yet (rendered once per slice).
    private var needsRender: [UInt64] = []
    /// Events (and props updates) handled in the current slice of the parent's messages.
    private(set) var eventsInSlice = 0

    init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        lastHeard = now
        lastSent = now
    }

    /// The hosted child of `childID` if it belongs to the placement `epoch`.
    ///
    /// `mutating`, like `sliceContinues`, though it changes nothing: the driver holds the machine
    /// in a class's property, where a non-mutating call first copies the whole machine (a
    /// thousand instructions per message, measured), while a mutating one works in place.
    mutating func child(_ childID: UInt64, epoch: UInt64) -> Child? {
        guard let hosted = children[childID], hosted.epoch == epoch else { return nil }
        return hosted.child
    }

    /// What the machine holds beyond its children, for the simulator's bound on memory.
    var pendingCount: Int {
        pendingRenderings.count + pendingOutputs.count + flushOrder.count + needsRender.count + deferredReleases.count
    }

    // MARK: The connection

    /// Any message from the parent arrived: it is alive, and the connection proven.
    mutating func heardFromParent(at now: Instant) {
        lastHeard = now
        if connectedAt == nil { connectedAt = now }
    }

    /// A message left for the parent.
    mutating func sentToParent(at now: Instant) {
        lastSent = now
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
        guard connectedAt != nil else {
            if hello { helloPending = true }
            return .notConnectedYet
        }
        return .dropped
    }

    /// WELCOME: the parent counts on this worker.
    mutating func welcomed(drains: Bool) {
        reconnectAttempts = 0
        parentDrains = drains
        isWelcomed = true
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
        if isWelcomed {
            let recovered = connectionTrouble
            connectionTrouble = false
            return Handshake(sendHello: false, recovered: recovered, fence: fence(silence: .zero, at: now))
        }
        connectedAt = now
        handshakeFailed = false
        // Silence is counted from the moment the parent can hear this worker.
        lastHeard = now
        // A HELLO queued before the connection leaves only now: that is this worker's last send
        // as far as the parent (and fencing) can tell.
        lastSent = now
        var result = Handshake(sendHello: false, recovered: connectionTrouble)
        if helloPending {
            helloPending = false
            result.sendHello = true
        }
        connectionTrouble = false
        return result
    }

    mutating func handshakeFailed(at now: Instant) {
        connectionTrouble = true
        handshakeFailed = true
    }

    /// libzmq retries connecting; returns whether that is news worth a line.
    mutating func connectRetried() -> Bool {
        guard !connectionTrouble else { return false }
        connectionTrouble = true
        return true
    }

    /// The connection to the parent closed (the monitor's `disconnected`: the parent's process
    /// died, or its side closed it). A welcomed worker of a parent with several endpoints (a
    /// leader and its standbys) takes it as the sign a standby is taking over and moves on to
    /// the next endpoint at once, rather than after the liveness window of silence: a parent that
    /// lives and takes the connection back would be moved on from all the same, when its
    /// handshake succeeds (`handshakeSucceeded(at:)`). `nil` otherwise: with one endpoint libzmq
    /// reconnects and the rejoin follows the handshake; before the WELCOME the silence rule covers it.
    mutating func connectionClosed(at now: Instant) -> Fence? {
        guard configuration.hasParent, configuration.parentEndpoints > 1, isWelcomed, connectedAt != nil, !isShuttingDown else { return nil }
        return fence(silence: .zero, at: now)
    }

    /// RECONNECT: the parent does not know this connection. Returns the children to stop (and a
    /// drain that ended) when the worker joins again with HELLO; `nil` when it ignores it (not
    /// welcomed yet: the HELLO already sent is still to be answered).
    mutating func reconnectRequested() -> Forgotten? {
        guard isWelcomed else { return nil }
        return forgetChildren()
    }

    // MARK: The lease

    /// The silence since this worker last heard from or sent to its parent, when it exceeds the
    /// liveness window while children are hosted: the parent may have declared this worker dead
    /// and placed its children elsewhere, so nothing more may be applied here. `nil`: the lease
    /// holds.
    func silenceBeyondLease(at now: Instant) -> Duration? {
        guard configuration.hasParent, !isShuttingDown, !children.isEmpty else { return nil }
        let silence = now - min(lastHeard, lastSent)
        return silence > configuration.liveness ? silence : nil
    }

    /// Children stopped at once, and the drain that ended with them.
    struct Forgotten {
        var children: [Hosted]
        var drain: DrainOutcome?
    }

    /// What the driver does when the lease ran out, or the parent stayed silent.
    enum Fence {
        /// Leaving anyway (a drain began): the children stop, no reconnection.
        case stopWhileLeaving(silence: Duration, Forgotten)
        /// The children stop, the socket is replaced (its queued input unread) and HELLO sent.
        case reconnect(silence: Duration, attempt: Int, afterFailedHandshake: Bool, Forgotten)
    }

    /// Fences if the lease ran out (`silenceBeyondLease`); `nil` when it holds.
    mutating func fenceIfLeaseRanOut(at now: Instant) -> Fence? {
        guard let silence = silenceBeyondLease(at: now) else { return nil }
        return fence(silence: silence, at: now)
    }

    private mutating func fence(silence: Duration, at now: Instant) -> Fence? {
        if isLeaving {
            guard !children.isEmpty || drain != nil else { return nil }
            return .stopWhileLeaving(silence: silence, forgetChildren())
        }
        return reconnect(silence: silence, at: now)
    }

    private mutating func reconnect(silence: Duration, at now: Instant) -> Fence {
        reconnectAttempts += 1
        let afterFailedHandshake = handshakeFailed
        let forgotten = forgetChildren()
        connectedAt = nil
        handshakeFailed = false
        helloPending = false
        lastHeard = now
        return .reconnect(silence: silence, attempt: reconnectAttempts, afterFailedHandshake: afterFailedHandshake, forgotten)
    }

    /// Stops hosting everything: the parent places these children again from their snapshots,
    /// so copies here would only diverge. Also ends a drain (nothing can be handed over now).
    mutating func forgetChildren() -> Forgotten {
        let drainOutcome = finishDrain(.notConnected)
        isWelcomed = false
        let stopped = children.values.sorted { $0.path < $1.path }
        children.removeAll()
        pendingRenderings.removeAll()
        pendingOutputs.removeAll()
        flushOrder.removeAll()
        flushScheduled.removeAll()
        needsRender.removeAll()
        currentCause = nil
        return Forgotten(children: stopped, drain: drainOutcome)
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
        if isWelcomed, now - lastSent >= interval { tick.sendHeartbeat = true }
        // With several parent endpoints (a leader and its standbys) the back-off grows per round
        // of them all, and an endpoint that cannot be reached at all (a standby binds nothing)
        // counts as silent: the worker moves on to the next after one window.
        let backoff = interval * (1 << min(reconnectAttempts / max(configuration.parentEndpoints, 1), 5))
        let unreachable = configuration.parentEndpoints > 1 && connectedAt == nil && !handshakeFailed
        // Only once this socket's handshake has succeeded, or failed: while it is in progress
        // there is no parent to be silent. Until the parent has welcomed this worker, its answer
        // may take several round trips on a lossy link: four windows.
        let window = isWelcomed || unreachable ? configuration.liveness : configuration.liveness * 4
        if connectedAt != nil || handshakeFailed || unreachable, now - lastHeard > window + backoff {
            tick.fence = fence(silence: now - lastHeard, at: now)
        }
        return tick
    }

    // MARK: Children

    /// What to do with a START.
    enum StartDecision: Equatable {
        case place
        case atCapacity
    }

    func startRequested() -> StartDecision {
        children.count < configuration.capacity ? .place : .atCapacity
    }

    /// The child now hosted for the placement `epoch` (after any earlier copy was discarded).
    /// `appliedThrough`: the last event its snapshot includes, when the START says (its header's
    /// acknowledgement; 0 when the parent does not say): the placement's first event must be the
    /// next one.
    mutating func started(_ childID: UInt64, epoch: UInt64, path: String, child: Child, appliedThrough: UInt64 = 0) {
        children[childID] = Hosted(
            childID: childID, child: child, epoch: epoch, path: path, applied: appliedThrough, acknowledged: appliedThrough)
        // Placed before the parent read this worker's DRAIN: it is released like the others.
        drain?.children += 1
    }

    /// STOP: the copy of `epoch` ends (one for another placement stays). Returns it.
    mutating func stopRequested(_ childID: UInt64, epoch: UInt64) -> Hosted? {
        guard children[childID]?.epoch == epoch else { return nil }
        return discard(childID)
    }

    /// Ends hosting `childID` and drops what it had queued for the parent. Returns its copy.
    @discardableResult
    mutating func discard(_ childID: UInt64) -> Hosted? {
        pendingRenderings[childID] = nil
        pendingOutputs[childID] = nil
        needsRender.removeAll { $0 == childID }
        if currentCause?.child == childID { currentCause = nil }
        return children.removeValue(forKey: childID)
    }

    /// Props were applied to a child: work of an event's size in the slice.
    mutating func propsUpdated() {
        eventsInSlice += 1
    }

    // MARK: Events

    /// A slice of the parent's messages begins.
    mutating func beginSlice() {
        eventsInSlice = 0
    }

    /// Whether the slice may read another message: the lease holds and it has not applied
    /// `limit` events yet. `mutating` though it changes nothing: see `child(_:epoch:)`.
    mutating func sliceContinues(limit: Int, at now: Instant) -> Bool {
        eventsInSlice < limit && silenceBeyondLease(at: now) == nil
    }

    /// Events being applied for one child, one at a time (`nextEvent`, `eventApplied`).
    struct EventRun {
        let childID: UInt64
        /// The copy the events are for.
        let child: Child
        let firstSequence: UInt64
        let count: Int
        fileprivate(set) var next = 0
        fileprivate(set) var delivered = 0
        fileprivate(set) var applied: UInt64
    }

    /// What to do with an EVENT message.
    enum EventsArrival {
        /// Apply its events, one at a time (`nextEvent`, `eventApplied`, `endEvents`).
        case apply(EventRun)
        /// No such copy here: the events are dropped.
        case unknownChild
        /// Its first event is not the one after the last applied: messages between were lost
        /// (a disconnect loses what is in flight, and libzmq reconnects by itself). Applying it
        /// would skip events and acknowledge them as applied, so the worker fences instead: its
        /// children stop, it joins again, and the parent places them from their last
        /// acknowledged snapshots, replaying every event after them.
        case inputLost(expected: UInt64, received: UInt64, Fence)
    }

    /// EVENT for `childID`'s placement `epoch`: `count` events from `firstSequence`. Within a
    /// placement the parent numbers a child's events without a gap and sends each once, in
    /// order, so any other first event means lost input.
    mutating func eventsArrived(for childID: UInt64, epoch: UInt64, firstSequence: UInt64, count: Int, at now: Instant) -> EventsArrival {
        guard let run = beginEvents(for: childID, epoch: epoch, firstSequence: firstSequence, count: count) else { return .unknownChild }
        // Unknown until the placement applied its first event when the START did not say.
        guard run.applied == 0 || firstSequence == run.applied + 1 else {
            let fence: Fence = isLeaving ? .stopWhileLeaving(silence: .zero, forgetChildren()) : reconnect(silence: .zero, at: now)
            return .inputLost(expected: run.applied + 1, received: firstSequence, fence)
        }
        return .apply(run)
    }

    /// EVENT for `childID`'s placement `epoch`: `count` events from `firstSequence`. `nil`: no
    /// such copy here, the events are dropped.
    func beginEvents(for childID: UInt64, epoch: UInt64, firstSequence: UInt64, count: Int) -> EventRun? {
        guard let hosted = children[childID], hosted.epoch == epoch else { return nil }
        return EventRun(childID: childID, child: hosted.child, firstSequence: firstSequence, count: count, applied: hosted.applied)
    }

    /// What to do with the next event of a run.
    enum NextEvent: Equatable {
        /// Apply it: its sequence (the outputs its action emits are tagged with it).
        case apply(sequence: UInt64)
        /// The run is over.
        case done
        /// The lease ran out: apply nothing more; the driver fences (`fenceIfLeaseRanOut`).
        case leaseRanOut
    }

    /// The lease, before every event: the thread may have been stopped between two.
    mutating func nextEvent(of run: inout EventRun, at now: Instant) -> NextEvent {
        guard run.next < run.count else { return .done }
        guard silenceBeyondLease(at: now) == nil else { return .leaseRanOut }
        let sequence = run.firstSequence + UInt64(run.next)
        currentCause = (run.childID, sequence, 0)
        return .apply(sequence: sequence)
    }

    /// The event `nextEvent` returned was applied (`delivered`: a sink took it; an event for a
    /// token the child no longer knows counts as applied, and is acknowledged, all the same).
    mutating func eventApplied(in run: inout EventRun, delivered: Bool) {
        currentCause = nil
        run.applied = max(run.applied, run.firstSequence + UInt64(run.next))
        run.next += 1
        if delivered { run.delivered += 1 }
    }

    /// The run ended (all applied, or the lease ran out part way: what was applied counts).
    mutating func endEvents(_ run: EventRun) {
        currentCause = nil
        guard children[run.childID] != nil else { return }
        if run.applied > children[run.childID]!.applied {
            children[run.childID]!.applied = run.applied
            markDirty(run.childID)
        }
        eventsInSlice += run.next
        if run.delivered > 0, !needsRender.contains(run.childID) { needsRender.append(run.childID) }
    }

    // MARK: What children produce

    mutating func renderingProduced(_ bytes: [UInt8], sequence: UInt64, childID: UInt64, path: String) {
        markDirty(childID)
        pendingRenderings[childID] = PendingRendering(bytes: bytes, sequence: sequence, path: path)
    }

    /// An output, tagged with the event being applied (0: no event caused it).
    mutating func outputProduced(_ bytes: [UInt8], childID: UInt64, path: String) {
        markDirty(childID)
        var cause: UInt64 = 0
        var ordinal: UInt32 = 0
        if let current = currentCause, current.child == childID {
            cause = current.sequence
            ordinal = current.ordinal
            currentCause?.ordinal += 1
        }
        pendingOutputs[childID, default: PendingOutputs(path: path)].append(bytes, cause: cause, ordinal: ordinal)
    }

    private mutating func markDirty(_ childID: UInt64) {
        // A set beside the list: a scan of the list cost a pass of N updates N²/2 comparisons.
        if flushScheduled.insert(childID).inserted { flushOrder.append(childID) }
    }

    // MARK: Flushes

    /// The children that applied events since they last rendered, to render before the flush.
    mutating func takeChildrenToRender(into list: inout [UInt64]) {
        list.removeAll(keepingCapacity: true)
        guard !needsRender.isEmpty else { return }
        swap(&list, &needsRender)
    }

    /// The children with something to flush, in order (the list's storage is swapped, so the
    /// driver hands the same array back each time and nothing is allocated).
    mutating func takeFlushOrder(into list: inout [UInt64]) {
        list.removeAll(keepingCapacity: true)
        swap(&list, &flushOrder)
        flushScheduled.removeAll(keepingCapacity: true)
    }

    /// One child's flush: sent as one step for the parent.
    struct Flush {
        let childID: UInt64
        let epoch: UInt64
        let path: String
        var outputs: PendingOutputs?
        var rendering: PendingRendering?
        /// The cumulative acknowledgement (every event up to it applied); `nil`: none.
        var acknowledged: UInt64?
        /// The answer to RELEASE: the copy here stops after it.
        var released: Bool
        /// Whether the flush carries the child's snapshot (with an acknowledgement or outputs).
        var carriesSnapshot: Bool { acknowledged != nil || outputs != nil }
        /// A rendering alone is one step by itself (a RENDERING message, not OUTPUTS).
        var isRenderingOnly: Bool { !carriesSnapshot }
    }

    /// What `childID` produced since its last flush, its acknowledgement now counted as sent.
    /// `nil`: not hosted, or nothing to send.
    mutating func flush(_ childID: UInt64, releasing: Bool = false) -> Flush? {
        let outputs = pendingOutputs.removeValue(forKey: childID)
        let rendering = pendingRenderings.removeValue(forKey: childID)
        guard let hosted = children[childID] else { return nil }
        let acknowledge = hosted.applied > hosted.acknowledged || releasing
        if acknowledge { children[childID]!.acknowledged = hosted.applied }
        guard outputs != nil || acknowledge || rendering != nil else { return nil }
        return Flush(
            childID: childID, epoch: hosted.epoch, path: outputs?.path ?? hosted.path, outputs: outputs, rendering: rendering,
            acknowledged: acknowledge ? hosted.applied : nil, released: releasing)
    }

    /// The number of the next OUTPUTS message for `childID`'s placement (1, 2, …; 0: not
    /// hosted), carried in the message's `sequence` field: a connection that broke loses what was
    /// in flight while libzmq reconnects by itself, and the parent, seeing a number skipped,
    /// knows outputs and acknowledgements were lost and moves the child from its last
    /// acknowledged state rather than take a later acknowledgement for the lost ones.
    mutating func numberOutputsMessage(for childID: UInt64) -> UInt64 {
        guard children[childID] != nil else { return 0 }
        children[childID]!.outputsMessages += 1
        return children[childID]!.outputsMessages
    }

    // MARK: Draining

    /// What `beginDrain` decided.
    enum DrainStart {
        /// A drain runs already: the caller waits for its outcome.
        case alreadyRunning
        /// Over at once, with this outcome.
        case finished(DrainOutcome)
        /// Begun: the driver flushes, then sends DRAIN.
        case begun(children: Int)
        /// Over at once: the parent predates draining.
        case unsupportedByParent(DrainOutcome)
    }

    mutating func beginDrain(deadline: Duration, at now: Instant) -> DrainStart {
        if drain != nil { return .alreadyRunning }
        let count = children.count
        guard configuration.hasParent, !isShuttingDown, isWelcomed else {
            return .finished(DrainOutcome(ending: .notConnected, children: count, handedOver: 0))
        }
        guard parentDrains else {
            return .unsupportedByParent(DrainOutcome(ending: .unsupportedByParent, children: count, handedOver: 0))
        }
        // Nothing to hand over: leave at once.
        guard count > 0 else { return .finished(DrainOutcome(ending: .handedOver, children: 0, handedOver: 0)) }
        isLeaving = true
        drain = Drain(deadline: now + deadline, children: count)
        return .begun(children: count)
    }

    /// What to do with a RELEASE.
    enum ReleaseDecision {
        /// No such copy here: answer with an empty released flush, so the parent stops waiting.
        case notHosted
        /// Held until forwarded events are acknowledged (`takeDeferredReleases`).
        case deferred
        /// Apply what is queued, render, send `flush(_:releasing: true)`, then `released(_:)`.
        case release(Child)
    }

    /// RELEASE for `childID`'s placement `epoch`. `forwardedEventsUnacknowledged`: this process,
    /// as a parent of its own workers, has events they have not acknowledged (a middle process
    /// of a nested tree): they are in no snapshot yet, so the answer waits.
    mutating func releaseRequested(
        _ childID: UInt64, epoch: UInt64, path: String, forwardedEventsUnacknowledged: Bool
    ) -> ReleaseDecision {
        guard let hosted = children[childID], hosted.epoch == epoch else { return .notHosted }
        if forwardedEventsUnacknowledged {
            deferredReleases.append(DeferredRelease(childID: childID, epoch: epoch, path: path))
            return .deferred
        }
        return .release(hosted.child)
    }

    /// The released child's final flush left: its copy here ends.
    mutating func released(_ childID: UInt64) -> Hosted? {
        guard let hosted = discard(childID) else { return nil }
        drain?.handedOver += 1
        return hosted
    }

    /// The RELEASEs held, once nothing forwarded waits for an acknowledgement.
    mutating func takeDeferredReleases(forwardedEventsUnacknowledged: Bool) -> [DeferredRelease] {
        guard !deferredReleases.isEmpty, !forwardedEventsUnacknowledged else { return [] }
        defer { deferredReleases = [] }
        return deferredReleases
    }

    /// After the deferred releases were answered: the drain's end, if the parent answered already.
    mutating func finishDrainIfAnswered() -> DrainOutcome? {
        guard drain?.answered == true, deferredReleases.isEmpty else { return nil }
        return finishDrain(.handedOver)
    }

    /// The parent's answer to DRAIN (after every RELEASE it sent): the drain's outcome, or `nil`
    /// while deferred releases are still to be answered.
    mutating func drainAnswered() -> DrainOutcome? {
        guard deferredReleases.isEmpty else {
            drain?.answered = true
            return nil
        }
        return finishDrain(.handedOver)
    }

    /// A drain whose deadline passed ends.
    mutating func drainDeadline(at now: Instant) -> DrainOutcome? {
        guard let drain, now >= drain.deadline else { return nil }
        return finishDrain(.deadlinePassed)
    }

    /// Ends the drain (if one runs) and returns its outcome.
    mutating func finishDrain(_ ending: DrainOutcome.Ending) -> DrainOutcome? {
        guard let current = drain else { return nil }
        drain = nil
        deferredReleases = []
        return DrainOutcome(ending: ending, children: max(current.children, current.handedOver), handedOver: current.handedOver)
    }

    // MARK: Shutdown

    /// The runtime stops: the drain ends, every child stops (the driver then says GOODBYE).
    mutating func shutDown() -> Forgotten {
        let drainOutcome = finishDrain(.interrupted)
        isShuttingDown = true
        let stopped = children.values.sorted { $0.path < $1.path }
        for hosted in stopped { discard(hosted.childID) }
        return Forgotten(children: stopped, drain: drainOutcome)
    }
}
