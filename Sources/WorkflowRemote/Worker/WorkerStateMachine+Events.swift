// The worker role's state machine (`WorkerStateMachine.swift`): an event's way through the worker: the
// parent's events (slices of its messages, each event checked against its child's placement, sequence and
// the lease before it is applied), what children produce (renderings, outputs tagged with their event)
// and the flushes that carry it back to the parent, with their state (`Hosting`, `PendingFlush`) and the
// only code that changes it.
extension WorkerStateMachine {
    /// The children hosted here and where each is in its events: the placements with their
    /// applied and acknowledged events, the event being applied (whose outputs it causes), the
    /// children to render before the next flush and the current slice of the parent's messages.
    /// Its fields change only through its methods, which the machine's START, STOP, event, flush
    /// and lease rules call.
    struct Hosting {
        /// The children hosted here, by child id.
        private(set) var children: [UInt64: Hosted] = [:]
        /// The event being applied, to tag the outputs it causes.
        private(set) var currentCause: (child: UInt64, sequence: UInt64, ordinal: UInt32)?
        /// Children that applied events without rendering yet (rendered once per slice).
        private(set) var needsRender: [UInt64] = []
        /// Events (and props updates) handled in the current slice of the parent's messages.
        private(set) var eventsInSlice = 0
        /// When the current slice ends, however few events it applied (`sliceContinues`).
        private(set) var sliceEnds: Instant

        init(sliceEnds: Instant) {
            self.sliceEnds = sliceEnds
        }

        /// A START placed `hosted` (replacing any copy of the same child).
        mutating func placed(_ hosted: Hosted) {
            children[hosted.childID] = hosted
        }

        /// `childID`'s copy ends: its event in progress and its render pending go with it.
        mutating func removed(_ childID: UInt64) -> Hosted? {
            needsRender.removeAll { $0 == childID }
            if currentCause?.child == childID { currentCause = nil }
            return children.removeValue(forKey: childID)
        }

        /// Every copy ends (the parent places them again): they are returned by path.
        mutating func removedAll() -> [Hosted] {
            let stopped = children.values.sorted { $0.path < $1.path }
            children.removeAll()
            needsRender.removeAll()
            currentCause = nil
            return stopped
        }

        /// A slice of the parent's messages begins, to end at `ends` at the latest.
        mutating func sliceBegan(ends: Instant) {
            eventsInSlice = 0
            sliceEnds = ends
        }

        /// Props were applied to a child: work of an event's size in the slice.
        mutating func propsUpdated() {
            eventsInSlice += 1
        }

        /// `sequence` of `childID` is being applied: the outputs its action emits are tagged with it.
        mutating func eventBegan(_ childID: UInt64, sequence: UInt64) {
            currentCause = (childID, sequence, 0)
        }

        /// The event being applied was applied.
        mutating func eventEnded() {
            currentCause = nil
        }

        /// The cause and ordinal of an output `childID` emits now (0, 0: no event caused it).
        mutating func outputCaused(by childID: UInt64) -> (cause: UInt64, ordinal: UInt32) {
            guard let current = currentCause, current.child == childID else { return (0, 0) }
            currentCause?.ordinal += 1
            return (current.sequence, current.ordinal)
        }

        /// A run of events ended: what it applied counts (to acknowledge, to render, in the
        /// slice). Returns whether its child has a new acknowledgement to flush.
        mutating func eventsEnded(_ run: EventRun) -> Bool {
            currentCause = nil
            guard children[run.childID] != nil else { return false }
            var advanced = false
            if run.applied > children[run.childID]!.applied {
                children[run.childID]!.applied = run.applied
                children[run.childID]!.knowsNextEvent = true
                advanced = true
            }
            eventsInSlice += run.next
            if run.delivered > 0, !needsRender.contains(run.childID) { needsRender.append(run.childID) }
            return advanced
        }

        /// The children to render before the flush, swapped into `list` (see `takeFlushOrder`).
        mutating func takeChildrenToRender(into list: inout [UInt64]) {
            list.removeAll(keepingCapacity: true)
            guard !needsRender.isEmpty else { return }
            swap(&list, &needsRender)
        }

        /// A flush acknowledges every event `childID` applied (through `applied`).
        mutating func acknowledged(_ childID: UInt64, through applied: UInt64) {
            children[childID]?.acknowledged = applied
        }

        /// The number of the next OUTPUTS message for `childID`'s placement (0: not hosted).
        mutating func outputsMessageNumbered(for childID: UInt64) -> UInt64 {
            guard children[childID] != nil else { return 0 }
            children[childID]!.outputsMessages += 1
            return children[childID]!.outputsMessages
        }
    }

    /// What the children produced since their last flush, to flush: each one's latest rendering
    /// and its outputs, and the children with something to flush in the order they first had it.
    /// Its fields change only through its methods, which the machine's rules for what children
    /// produce, flushes and the end of a copy call.
    struct PendingFlush {
        private var renderings: [UInt64: PendingRendering] = [:]
        private var outputs: [UInt64: PendingOutputs] = [:]
        /// Children with something to flush, in the order they first had it, and the same as a set.
        private var order: [UInt64] = []
        private var scheduled: Set<UInt64> = []

        /// What it holds, for the simulator's bound on memory.
        var count: Int { renderings.count + outputs.count + order.count }

        /// `childID` has something to flush.
        mutating func changed(_ childID: UInt64) {
            // A set beside the list: a scan of the list cost a pass of N updates N²/2 comparisons.
            if scheduled.insert(childID).inserted { order.append(childID) }
        }

        /// `childID` rendered: only its latest rendering is sent.
        mutating func renderingProduced(_ rendering: PendingRendering, childID: UInt64) {
            changed(childID)
            renderings[childID] = rendering
        }

        /// `childID` emitted an output, tagged with its cause and ordinal.
        mutating func outputProduced(_ bytes: [UInt8], childID: UInt64, path: String, cause: UInt64, ordinal: UInt32) {
            changed(childID)
            outputs[childID, default: PendingOutputs(path: path)].append(bytes, cause: cause, ordinal: ordinal)
        }

        /// The children with something to flush, in order, swapped into `list`.
        mutating func takeFlushOrder(into list: inout [UInt64]) {
            list.removeAll(keepingCapacity: true)
            swap(&list, &order)
            scheduled.removeAll(keepingCapacity: true)
        }

        /// `childID`'s outputs and rendering, taken for its flush.
        mutating func flushed(_ childID: UInt64) -> (outputs: PendingOutputs?, rendering: PendingRendering?) {
            (outputs.removeValue(forKey: childID), renderings.removeValue(forKey: childID))
        }

        /// `childID`'s copy ended: what it had queued is dropped.
        mutating func discarded(_ childID: UInt64) {
            renderings[childID] = nil
            outputs[childID] = nil
        }

        /// Every copy ended: nothing is flushed.
        mutating func removedAll() {
            renderings.removeAll()
            outputs.removeAll()
            order.removeAll()
            scheduled.removeAll()
        }
    }

    // MARK: Events

    /// A slice of the parent's messages begins at `now`.
    mutating func beginSlice(at now: Instant) {
        hosting.sliceBegan(ends: now + configuration.sliceLength)
    }

    /// Whether the slice may read another message: the lease holds, it has not applied `limit`
    /// events yet, and it began less than half a heartbeat interval ago (a slice of slow actions
    /// ends early, so its flush and the heartbeats keep reaching the parent within its liveness
    /// window). `mutating` though it changes nothing: see `child(_:epoch:)`.
    mutating func sliceContinues(limit: Int, at now: Instant) -> Bool {
        hosting.eventsInSlice < limit && now < hosting.sliceEnds && silenceBeyondLease(at: now) == nil
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
        guard firstSequence == run.applied + 1 || hosting.children[childID]?.knowsNextEvent == false || !configuration.checks.workerChecksEventSequence else {
            let fence: Fence = isLeaving ? .stopWhileLeaving(silence: .zero, forgetChildren()) : reconnect(silence: .zero, at: now)
            return .inputLost(expected: run.applied + 1, received: firstSequence, fence)
        }
        return .apply(run)
    }

    /// EVENT for `childID`'s placement `epoch`: `count` events from `firstSequence`. `nil`: no
    /// such copy here, the events are dropped.
    func beginEvents(for childID: UInt64, epoch: UInt64, firstSequence: UInt64, count: Int) -> EventRun? {
        guard let hosted = hosting.children[childID], hosted.epoch == epoch else { return nil }
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
        hosting.eventBegan(run.childID, sequence: sequence)
        return .apply(sequence: sequence)
    }

    /// The event `nextEvent` returned was applied (`delivered`: a sink took it; an event for a
    /// token the child no longer knows counts as applied, and is acknowledged, all the same).
    mutating func eventApplied(in run: inout EventRun, delivered: Bool) {
        hosting.eventEnded()
        run.applied = max(run.applied, run.firstSequence + UInt64(run.next))
        run.next += 1
        if delivered { run.delivered += 1 }
    }

    /// The run ended (all applied, or the lease ran out part way: what was applied counts).
    mutating func endEvents(_ run: EventRun) {
        if hosting.eventsEnded(run) { pending.changed(run.childID) }
    }

    // MARK: What children produce

    mutating func renderingProduced(_ bytes: [UInt8], sequence: UInt64, childID: UInt64, path: String) {
        pending.renderingProduced(PendingRendering(bytes: bytes, sequence: sequence, path: path), childID: childID)
    }

    /// An output, tagged with the event being applied (0: no event caused it).
    mutating func outputProduced(_ bytes: [UInt8], childID: UInt64, path: String) {
        let (cause, ordinal) = hosting.outputCaused(by: childID)
        pending.outputProduced(bytes, childID: childID, path: path, cause: cause, ordinal: ordinal)
    }

    // MARK: Flushes

    /// The children that applied events since they last rendered, to render before the flush.
    mutating func takeChildrenToRender(into list: inout [UInt64]) {
        hosting.takeChildrenToRender(into: &list)
    }

    /// The children with something to flush, in order (the list's storage is swapped, so the
    /// driver hands the same array back each time and nothing is allocated).
    mutating func takeFlushOrder(into list: inout [UInt64]) {
        pending.takeFlushOrder(into: &list)
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
        let (outputs, rendering) = pending.flushed(childID)
        guard let hosted = hosting.children[childID] else { return nil }
        let acknowledge = hosted.applied > hosted.acknowledged || releasing
        if acknowledge { hosting.acknowledged(childID, through: hosted.applied) }
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
        hosting.outputsMessageNumbered(for: childID)
    }
}
