import Foundation
import Logging
import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// The parent's record of one remote child: what it last sent, what the worker last rendered.
///
/// What is per node and not protocol: the props, the renderings and their order, the event
/// ledger, the sink into its node, the codecs. Where the child is in its lifecycle (placed on
/// which worker, releasing, refused, moving) is the parent state machine's
/// (`ParentStateMachine.Phase`), which decides START vs UPDATE (`render(props:requests:)` asks
/// it through `requests`); the proxy carries out what the driver hands it.
///
/// Confined to the remote runtime's loop thread (it lives in a `RemoteWorkflow` node's state and
/// in the parent driver's table, both reached only from that thread). It holds no reference to
/// the driver: the driver makes it (`ParentDriver.makeProxy`) with what it needs
/// (`Environment`), and its node passes the driver in when a render or its end asks something of
/// the parent role (`RemoteChildRequests`).
final class RemoteChildProxy<Child: RemotableWorkflow>: AnyRemoteChildProxy {
    typealias Environment = RemoteChildProxyEnvironment

    let childID: UInt64
    /// The key its node declares this proxy's side effect under every pass: `childID`, so a new
    /// proxy (a new placement) ends the old one's side effect. Wrapped once: an integer's
    /// `AnyHashable` is made through a dynamic cast, ≈ 670 instructions a pass (measured). (A
    /// key struct of its own hashed no cheaper: its box compares through two casts.)
    let sideEffectKey: AnyHashable
    let path: String
    let placement: RemotePlacement
    private let environment: Environment
    /// How the proxy hands its node a flush or asks it to render again: made by the node's
    /// first render with this proxy and kept (any pass's sink of a live node applies its action).
    var sink: Sink<ProxyEvent<Child.Rendering, Child.Output>>?
    /// The kind of `sink` (`RenderContext.sinkKind(of:actionType:)`), declared again each pass.
    var sinkKind: ObjectIdentifier?

    private var lastProps: [UInt8]?
    private var props: Child?
    /// The props sent and the renderings received and installed, by sequence, and the flushes
    /// handed to the node (`ProxyEvent.flush`) and not yet applied by it.
    private var renderings = ChildRenderingOrder()
    /// Sequence number of the props last sent (START = 1, each UPDATE + 1).
    var propsSequence: UInt64 { renderings.propsSequence }
    /// The rendering the node shows: installed together with the outputs that came with it.
    private var rendering: Child.Rendering?
    /// `rendering` as the worker encoded it: what the node's snapshot keeps, so a parent restored
    /// from it shows the child's last rendering at once rather than its placeholder.
    private(set) var renderingBytes: [UInt8]?
    /// Outputs of a flush whose remaining chunks are still on the wire. A worker that dies
    /// between the chunks of a flush (a slice of hundreds of events makes flushes of several
    /// messages) loses those outputs here, and the replay on its successor delivers them (the
    /// parent machine's `OutputOrder` does not count them as delivered).
    private var partialOutputs: [Child.Output] = []
    /// Set while a refresh asked of the node is unanswered (`isRefreshPending`).
    private var refreshPending = false
    private(set) var status: RemoteChildStatus = .starting {
        didSet { if status != oldValue { environment.status.report(path: path, typeName: typeName, status: status) } }
    }
    /// Set once its node ended or another proxy took over: its events no longer count in the
    /// parent's unacknowledged total, and its accounts are closed (the machine forgot the child).
    private var isStopped = false
    /// Set while the node renders: changes then are already reflected by that pass.
    private var isRendering = false

    /// Exactly-once events across failover: the events recorded and not yet acknowledged, oldest
    /// first (sent in batches at the end of the loop iteration, replayed on a new worker), and
    /// the child's state as of the last acknowledged one.
    private var ledger: ChildEventLedger
    /// Set while the parent's driver has this child in its list of children with events due.
    var eventsDue = false
    /// The child's state as of the last acknowledged event: where a new worker starts from.
    var snapshot: TreeSnapshot? { ledger.snapshot }

    /// `Child.remoteTypeName`, which reflects on the type every time: given by its maker, which
    /// computes it once per type (`ParentDriver.remoteTypeName(of:)`).
    let typeName: String
    /// `==` of the props when their type is `Equatable` (`nil`: compare the encoded bytes),
    /// looked up once: the conformance lookup cost more than the comparison, twice a round trip.
    private let propsEquality = equality(of: Child.self)
    private var importingCodec: any WireCodec { environment.importingCodec }

    /// Back-pressure: events sent and not yet acknowledged, against the runtime's limit.
    let outstanding: OutstandingEvents

    /// Names the sinks this child's renderings carry when this process passes them on in its
    /// own rendering (it is the middle of a tree of three processes): the same for this node in
    /// every process and every restart, so its parent's events still find it after a failover.
    let forwardingPrefix: String
    /// Events handed over with the snapshot this proxy started from (a restored or re-placed
    /// node): the first START sends them as a continuation, not as a failover's replay.
    private(set) var hasRestoredEvents: Bool

    /// - Parameters:
    ///   - path: the node's path in its host.
    ///   - typeName: `Child.remoteTypeName` (computed here when not given).
    ///   - forwardingPrefix: see `forwardingPrefix` (`SinkForwarder.prefix(scope:path:)`).
    ///   - outstanding: the child's back-pressure account.
    ///   - snapshot: the child's last acknowledged state, if any.
    ///   - pendingEvents: events the child was sent and has not acknowledged (from a snapshot, or
    ///     from the proxy this one replaces), sent again after its START, in order.
    ///   - lastRendering: the child's last rendering as its worker encoded it (from a snapshot, or
    ///     from the proxy this one replaces): shown, with status `reconnecting`, until the worker's
    ///     first rendering replaces it. Its sinks send to this proxy, which keeps their events
    ///     until the child runs again.
    init(
        childID: UInt64, path: String, typeName: String = Child.remoteTypeName, forwardingPrefix: String, placement: RemotePlacement,
        outstanding: OutstandingEvents,
        environment: Environment, snapshot: TreeSnapshot?, pendingEvents: [PendingRemoteEvent] = [], lastRendering: [UInt8]? = nil
    ) {
        self.ledger = ChildEventLedger(snapshot: snapshot, pendingEvents: pendingEvents)
        self.outstanding = outstanding
        self.path = path
        self.typeName = typeName
        self.placement = placement
        self.environment = environment
        self.forwardingPrefix = forwardingPrefix
        self.hasRestoredEvents = !pendingEvents.isEmpty
        self.childID = childID
        self.sideEffectKey = AnyHashable(childID)
        environment.unacknowledged.add(ledger.unacknowledged.count)
        // Accepted before (by the proxy or process this one continues): taken past the limit
        // rather than refused now.
        outstanding.take(pendingEvents.count)
        // Set here, not through `restore`: an initializer's assignment does not report the
        // change, which its maker (`ParentDriver.makeProxy`) does once.
        if let lastRendering, restore(lastRendering) { status = .reconnecting }
    }

    /// Shows `bytes`, the child's last rendering before its parent restarted (or before this
    /// placement), until the worker sends one; returns whether it decoded. A rendering that no
    /// longer decodes (written by another build) is dropped: the child shows its placeholder
    /// meanwhile, as it would without.
    private func restore(_ bytes: [UInt8]) -> Bool {
        do {
            rendering = try bytes.withUnsafeBytes {
                try importingCodec.decode(Child.Rendering.self, from: $0, reusing: environment.codingScratch)
            }
            renderingBytes = bytes
            return true
        } catch {
            environment.logger.warning("the last rendering of \(path) kept with its snapshot does not decode (\(error)): its placeholder shows until its worker renders it")
            return false
        }
    }

    /// Called by the node's render: asks the parent machine (through `requests`, the parent's
    /// driver) what the props call for, carries out START or UPDATE, and returns the best
    /// rendering known now. A request sent here is awaited by the runtime before the pass is
    /// published.
    func render(props newProps: Child, requests: some RemoteChildRequests) -> Child.Rendering {
        refreshPending = false
        isRendering = true
        defer { isRendering = false }
        // The same props as last time (the settled pass after an UPDATE renders the child again
        // with them): nothing to encode when the machine asks nothing for them.
        if let props, lastProps != nil, propsEquality?(props, newProps) == true, requests.propsRendered(proxy: self, changed: false) == .nothing {
            return rendering ?? newProps.placeholderRendering()
        }
        props = newProps
        let encoded: [UInt8]
        do {
            encoded = try environment.codec.encode(newProps, reusing: environment.codingScratch)
        } catch {
            status = .unavailable(.refused("props of \(typeName) do not encode: \(error)"))
            return rendering ?? newProps.placeholderRendering()
        }
        switch requests.propsRendered(proxy: self, changed: encoded != lastProps) {
        case .nothing:
            break
        case .start:
            // A flush of the last placement still waits for this node to apply it (staged before
            // its worker was lost or released the child): its acknowledgement and snapshot are
            // part of what the next placement starts from. Started before, the next placement
            // would apply again what that flush's outputs already reported (a middle's outputs
            // carry no event to drop them by). Applying the flush renders this node again, and
            // that pass places the child.
            guard !renderings.hasStagedFlushes else { break }
            lastProps = encoded
            renderings.propsSent()
            requests.start(proxy: self, props: encoded)
        case .update(let worker):
            lastProps = encoded
            renderings.propsSent()
            requests.update(proxy: self, props: encoded, on: worker)
        case .holdForNextPlacement:
            lastProps = encoded
            renderings.propsSent()
            requests.update(proxy: self, props: encoded, on: nil)
        }
        return rendering ?? newProps.placeholderRendering()
    }

    /// The props last sent, for re-sending START (after a worker loss).
    var encodedProps: [UInt8]? { lastProps }

    /// Whether the parent still waits for a rendering of the current props (`placed`: a worker
    /// hosts the child to answer).
    func isAwaitingRendering(placed: Bool) -> Bool {
        renderings.isAwaitingRendering(placed: placed)
    }

    /// Its node ended: its child stops on its worker (`requests`, the parent's driver), after the events
    /// still due.
    func stop(requests: some RemoteChildRequests) {
        guard !isStopped else { return }
        markStopped()
        requests.stop(proxy: self, sendingDueEvents: true)
    }

    /// Stops this proxy because another replaces it for the same node (a new placement), and
    /// gives it what the child's state is made of: the last acknowledged snapshot and every event
    /// not acknowledged, which the new placement applies on top of it. Events not sent yet stay
    /// here rather than go to the old worker first.
    func handOver(requests: some RemoteChildRequests) -> (snapshot: TreeSnapshot?, events: [PendingRemoteEvent], rendering: [UInt8]?) {
        let pending = pendingEvents
        if !isStopped {
            markStopped()
            requests.stop(proxy: self, sendingDueEvents: false)
        }
        return (snapshot, pending, renderingBytes)
    }

    /// Ends this proxy's part in the parent's accounts: its unacknowledged events are no longer
    /// counted (a proxy that replaces it counts those it is handed).
    private func markStopped() {
        isStopped = true
        environment.unacknowledged.add(-ledger.unacknowledged.count)
    }

    /// The events sent (or due) to the child and not acknowledged yet, oldest first: with
    /// `snapshot`, the child's state as this parent knows it.
    var pendingEvents: [PendingRemoteEvent] { ledger.pendingEvents }

    /// The restored events went out with the first START.
    func restoredEventsSent() {
        hasRestoredEvents = false
    }

    // MARK: Events and acknowledgements

    /// Numbers an event for this child and keeps it until the worker acknowledges it.
    func record(event token: String, bytes: [UInt8]) -> UInt64 {
        if !isStopped { environment.unacknowledged.add(1) }
        return ledger.record(token: token, bytes: bytes)
    }

    /// The events due to the child's current placement, which was sent those up to `lastSent`
    /// (`ChildEventLedger.events(after:)`).
    func events(after lastSent: UInt64) -> ArraySlice<ChildEventLedger.Event> {
        ledger.events(after: lastSent)
    }

    /// The last event a new placement's snapshot includes (`ChildEventLedger.snapshotThrough`).
    var snapshotThrough: UInt64 { ledger.snapshotThrough }

    /// How many events the worker has not acknowledged yet.
    var unacknowledgedCount: Int { ledger.unacknowledged.count }

    /// The last event recorded for the child, if the worker has not acknowledged it yet.
    var lastUnacknowledgedEvent: UInt64? { ledger.unacknowledged.last?.sequence }

    /// Whether the worker has acknowledged every event up to `sequence`.
    func hasAcknowledged(through sequence: UInt64) -> Bool { ledger.hasAcknowledged(through: sequence) }

    // MARK: From the parent's driver

    /// What the worker sent for one flush (one loop iteration of the worker): its outputs in
    /// emission order, then optionally the rendering after exactly those outputs. Returns
    /// whether the parent must render again.
    ///
    /// The flush is applied by the node as one step: its outputs (each with its own cascade)
    /// and its rendering become visible in the same render pass, never with a pass in between,
    /// as a local child's action, output cascade and render would. A flush with outputs is
    /// therefore handed to the node as a single `ProxyEvent.flush` action; one with only a
    /// rendering is installed at once unless an earlier flush is still waiting to be applied.
    ///
    /// `delivered` is the parent machine's decision on the message's outputs
    /// (`ParentStateMachine.outputsArrived`): an output it does not deliver (a replay's
    /// duplicate) is dropped.
    func receive(flush: WorkerFlush, workerName: String, delivered: ParentStateMachine.DeliveredOutputs) -> Bool {
        guard !isStopped else { return false }
        PackedValues.forEach(in: flush.outputs, lengths: flush.lengths) { index, bytes in
            guard delivered.contains(index) else { return true }
            do {
                partialOutputs.append(try importingCodec.decode(Child.Output.self, from: bytes, reusing: environment.codingScratch))
            } catch {
                environment.logger.error("an output of \(path) does not decode and was dropped: \(error)")
            }
            return true
        }
        guard !flush.continues else { return false }
        let outputs = partialOutputs
        partialOutputs = []
        let acknowledgement = Acknowledgement(sequence: flush.acknowledged, snapshot: flush.snapshot)
        var newRendering: (rendering: Child.Rendering, sequence: UInt64, bytes: [UInt8])?
        if let bytes = flush.rendering, renderings.accepts(renderingFor: flush.renderingSequence) {
            do {
                let decoded = try bytes.withUnsafeBytes {
                    try importingCodec.decode(Child.Rendering.self, from: $0, reusing: environment.codingScratch)
                }
                newRendering = (decoded, flush.renderingSequence, bytes)
                renderings.received(renderingFor: flush.renderingSequence)
                status = .running(worker: workerName)
            } catch {
                status = .unavailable(.undecodableRendering(typeName: typeName, reason: "\(error)"))
                environment.logger.error("rendering of \(path) does not decode: \(error)")
            }
        }
        guard !outputs.isEmpty || newRendering != nil || !acknowledgement.isEmpty else { return false }
        guard let sink, !outputs.isEmpty || renderings.hasStagedFlushes else {
            // No outputs, and nothing ahead of it: the acknowledgement holds at once and the
            // rendering (if any) is visible at once, as one step.
            acknowledge(acknowledgement)
            guard let newRendering else { return false }
            install(newRendering, refresh: true)
            return true
        }
        // The acknowledgement and snapshot go with the outputs: they hold once the node has
        // applied those outputs, so the node's state (which encodes `snapshot` and the events
        // still unacknowledged) never describes a child further along than the outputs its
        // parent has seen. A snapshot of the parent taken in between would otherwise restore a
        // child past outputs the parent never applied.
        renderings.flushStaged()
        sink.send(.flush(ProxyFlush(childID: childID, outputs: outputs, rendering: newRendering, acknowledgement: acknowledgement)))
        return true
    }

    /// The node applies a flush handed to it: takes its acknowledgement and installs its
    /// rendering (its outputs cascade in the same action, so the next pass shows both).
    func apply(_ flush: ProxyFlush<Child.Rendering, Child.Output>) {
        renderings.flushApplied()
        acknowledge(flush.acknowledgement)
        // Applying the action already makes the node render again: no refresh.
        if let rendering = flush.rendering { install(rendering, refresh: false) }
    }

    /// Forgets the chunks of a flush whose worker is gone before it sent the rest: their
    /// events are not acknowledged, so the next placement applies them again and sends their
    /// outputs anew.
    private func discardPartialFlush() {
        partialOutputs = []
    }

    /// The worker applied the events `acknowledgement` covers: they are forgotten and their
    /// back-pressure slots freed.
    private func acknowledge(_ acknowledgement: Acknowledgement) {
        let forgotten = ledger.acknowledge(acknowledgement)
        outstanding.release(forgotten)
        if !isStopped { environment.unacknowledged.add(-forgotten) }
    }

    private func install(_ new: (rendering: Child.Rendering, sequence: UInt64, bytes: [UInt8]), refresh: Bool) {
        // A flush is received only from the child's current copy (the machine's fencing), so it
        // is placed; a staged flush applied later installs without a refresh either way.
        let installation = renderings.install(renderingFor: new.sequence, placed: true)
        guard installation != .stale else { return }
        rendering = new.rendering
        renderingBytes = new.bytes
        // A rendering the settle waits for is shown by the pass that settles; any other needs
        // the node to render again.
        if refresh && installation == .unasked { requestRefresh() }
    }

    /// The child cannot run (the parent machine has it unplaced or refused,
    /// `ParentStateMachine.childFailed`). Keeps the last rendering (or the placeholder) and
    /// reports why.
    func fail(_ error: RemoteChildError) {
        guard !isStopped else { return }
        discardPartialFlush()
        // A restored child whose worker has not (re)joined yet is reconnecting, as expected right
        // after its parent restarted: it keeps showing its last rendering under that status.
        if status == .reconnecting, case .noWorker = error {
            requestRefresh()
            return
        }
        status = .unavailable(error)
        requestRefresh()
    }

    // MARK: Draining (a planned move)

    /// Its worker released the child (its final flush came, or the worker left during the
    /// handover): the child is placed again, from that flush's snapshot, by the next render (as
    /// after a failure, but with nothing to replay that the old worker had applied). The last
    /// rendering stays shown meanwhile, so the move is not visible in any frame.
    func released() {
        guard !isStopped else { return }
        discardPartialFlush()
        requestRefresh()
    }

    /// The parent machine has the child unplaced and a worker that may take it joined: the node
    /// renders again, which sends START.
    func placementRetried() {
        guard !isStopped else { return }
        requestRefresh()
    }

    /// Whether a refresh this proxy asked for is still unanswered: false once the node rendered
    /// the proxy after the request (that pass already showed what the refresh was for).
    var isRefreshPending: Bool { refreshPending }

    private func requestRefresh() {
        guard !refreshPending, !isRendering, let sink else { return }
        refreshPending = true
        sink.send(.refresh)
    }
}

/// What a remote child's proxy is given instead of the parent's driver: values and the loop's shared
/// coder storage. Not nested in the generic proxy: a nested type would be generic too, and
/// reaching its fields from the proxy's unspecialized methods would look its metadata up each
/// time.
struct RemoteChildProxyEnvironment {
    /// The codec for props.
    let codec: any WireCodec
    /// The codec for this child's renderings and outputs, with the decoder context their sinks
    /// need (they send EVENTs to it), made once rather than for every decode.
    let importingCodec: any WireCodec
    /// The coder storage the loop's decodes reuse.
    let codingScratch: WireCodingScratch
    let logger: Logger
    let status: RemoteChildStatusReporter
    /// The parent's count of unacknowledged events over all its children, which the proxy keeps
    /// up to date as its ledger changes (the `workflow_remote_events_outstanding` gauge).
    let unacknowledged: UnacknowledgedEventCount
}

/// The parent driver's type-erased view of a proxy.
protocol AnyRemoteChildProxy: AnyObject {
    var childID: UInt64 { get }
    var path: String { get }
    var typeName: String { get }
    var placement: RemotePlacement { get }
    var propsSequence: UInt64 { get }
    var encodedProps: [UInt8]? { get }
    func isAwaitingRendering(placed: Bool) -> Bool
    var status: RemoteChildStatus { get }
    var forwardingPrefix: String { get }
    var hasRestoredEvents: Bool { get }
    func restoredEventsSent()
    func released()
    func receive(flush: WorkerFlush, workerName: String, delivered: ParentStateMachine.DeliveredOutputs) -> Bool
    func record(event token: String, bytes: [UInt8]) -> UInt64
    func events(after lastSent: UInt64) -> ArraySlice<ChildEventLedger.Event>
    var snapshotThrough: UInt64 { get }
    var unacknowledgedCount: Int { get }
    var eventsDue: Bool { get set }
    var snapshot: TreeSnapshot? { get }
    var outstanding: OutstandingEvents { get }
    func fail(_ error: RemoteChildError)
    func placementRetried()
    func stop(requests: some RemoteChildRequests)
    var lastUnacknowledgedEvent: UInt64? { get }
    func hasAcknowledged(through sequence: UInt64) -> Bool
}

extension AnyRemoteChildProxy {
    /// The state version of the child's latest snapshot (1 before it has one): the child is
    /// started only on a worker that reads it (`PoolPlacement.choose`).
    var stateVersion: Int { snapshot?.stateVersion ?? 1 }
}

/// One message's share of a worker's flush, as the parent's driver hands it to a proxy: its outputs
/// (packed: `lengths[i]` bytes each) with their (event sequence, ordinal) tags and, in the last
/// message of the flush, the rendering after them.
struct WorkerFlush {
    var outputs: [UInt8]
    /// The size of each output in `outputs`; `PackedValues.lengths(_:match:)` holds.
    var lengths: [UInt32]
    var causes: [UInt64]
    var ordinals: [UInt32]
    /// More messages of the same flush follow (more outputs than one message carries).
    var continues: Bool
    var rendering: [UInt8]?
    /// The props sequence `rendering` was computed for.
    var renderingSequence: UInt64
    /// The last event the worker applied (cumulative; `0`: no acknowledgement in this message).
    var acknowledged: UInt64 = 0
    /// The child's state after the events acknowledged and the outputs in this flush.
    var snapshot: TreeSnapshot?
}

/// A worker's acknowledgement: the last event it applied (`0`: none) and its state after that
/// (and after the outputs that came with it).
struct Acknowledgement: Sendable {
    var sequence: UInt64
    var snapshot: TreeSnapshot?

    var isEmpty: Bool { sequence == 0 && snapshot == nil }
}
