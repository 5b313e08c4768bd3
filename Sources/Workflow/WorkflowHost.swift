import Synchronization

/// Runs a workflow tree: owns the root, applies actions, renders, and publishes renderings and
/// outputs to the rest of the program.
///
/// The tree lives on the host's `RuntimeLoop` (a dedicated thread, see `RuntimeLoop` for why).
/// The host itself is `Sendable`: read `rendering`, iterate `renderings`/`outputs` and call
/// `update(workflow:)` from any thread or task.
public final class WorkflowHost<WorkflowType: Workflow>: Sendable
where WorkflowType: Sendable, WorkflowType.Rendering: Sendable, WorkflowType.Output: Sendable {
    public typealias Rendering = WorkflowType.Rendering
    public typealias Output = WorkflowType.Output

    /// The loop the tree runs on.
    public let loop: any RuntimeLoop
    private let ownsLoop: Bool
    private let core: HostCoreBox<WorkflowType>
    private let publication: Publication<Rendering, Output>

    /// Starts `workflow` and renders it once before returning, so `rendering` is always valid.
    ///
    /// - Parameters:
    ///   - workflow: the root workflow (its props are the value itself).
    ///   - options: runtime switches (render-only-if-state-changed, conflation).
    ///   - observers: hooks for logging and tracing; none costs nothing.
    ///   - snapshot: a tree snapshot to restore the root and, as they are rendered again, its children.
    ///   - loop: the loop to run on; by default the host starts its own `ThreadLoop`.
    public convenience init(
        workflow: WorkflowType,
        options: RuntimeOptions = .default,
        observers: [any WorkflowObserver] = [],
        snapshot: TreeSnapshot? = nil,
        loop: (any RuntimeLoop)? = nil
    ) {
        self.init(workflow: workflow, options: options, observers: observers, snapshot: snapshot, loop: loop, listener: nil)
    }

    /// A host whose renderings and outputs are also handed synchronously, on the loop, to
    /// `listener`: for runtimes layered on the host.
    package init(
        workflow: WorkflowType,
        options: RuntimeOptions = .default,
        observers: [any WorkflowObserver] = [],
        snapshot: TreeSnapshot? = nil,
        loop: (any RuntimeLoop)?,
        listener: HostListener<Rendering, Output>?
    ) {
        self.ownsLoop = loop == nil
        let loop = loop ?? ThreadLoop(name: "workflow.host")
        self.loop = loop
        let mailbox = ActionMailbox(loop: loop, appliesSendsInline: options.applySendsInline)
        let publication = Publication<Rendering, Output>(listener: listener)
        self.publication = publication
        let core = HostCoreBox(
            workflow: workflow, options: options, observers: observers, snapshot: snapshot,
            mailbox: mailbox, loop: loop, publication: publication)
        self.core = core
        mailbox.setDrain({ [weak core] in core?.drain() }, inline: { [weak core] in core?.drainInline() })
        loop.runAndWait { core.start() }
    }

    deinit {
        let core = self.core
        loop.execute { core.stop() }
        if let threadLoop = loop as? ThreadLoop, ownsLoop { threadLoop.shutdown() }
    }

    /// The latest settled rendering.
    public var rendering: Rendering { publication.latestRendering }

    /// Every settled rendering from now on, starting with the current one. Conflated: a reader
    /// that falls behind sees the latest rendering, never a growing queue.
    public var renderings: AsyncStream<Rendering> { publication.subscribeRenderings() }

    /// Every output the root reports from now on, in order. Not conflated: nothing is dropped.
    public var outputs: AsyncStream<Output> { publication.subscribeOutputs() }

    /// Gives the root new props; the tree re-renders on the loop.
    public func update(workflow: WorkflowType) {
        core.mailbox.send(.updateRoot(workflow))
    }

    /// Gives the root new props, like `update(workflow:)`, and returns the first settled
    /// rendering published after the loop applied them: one that reflects them (or a later
    /// change). Returns `nil` if the host stopped first.
    ///
    /// Why: a caller that must see its own change (a request handler answering with the new
    /// screen, a test, the round-trip benchmark) would otherwise subscribe to `renderings` and
    /// filter, which costs a stream per wait and cannot tell which rendering came after the
    /// update. Here the loop hands the rendering to the waiting task directly, once.
    /// Not cancellable: the props are applied either way.
    public func updateAndAwaitRendering(workflow: WorkflowType) async -> Rendering? {
        let mailbox = core.mailbox
        return try? await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Rendering, any Error>) in
            mailbox.send(.awaitedUpdate(RootUpdate(workflow: workflow, waiter: continuation)))
        }
    }

    /// The tree's snapshot, taken on the loop after everything queued before this call.
    public func snapshot() async -> TreeSnapshot {
        let core = self.core
        return await loop.run { core.snapshot() }
    }

    /// An indented listing of the live tree (type names and keys), for debugging.
    public func treeDescription() async -> String {
        await liveTree().map { node in
            let indent = String(repeating: "  ", count: node.depth)
            return node.key.isEmpty ? indent + node.workflowType : "\(indent)\(node.workflowType) key=\"\(node.key)\""
        }.joined(separator: "\n")
    }

    /// Every node of the live tree in pre-order (parents before their children, siblings in
    /// render order), read on the host's loop between passes — what an inspector draws.
    public func liveTree() async -> [WorkflowTreeNode] {
        let core = self.core
        return await loop.run { core.liveTree() }
    }

    /// Tears the tree down at once; only callable on the host's loop (runtimes layered on the host).
    /// Applies every queued action now and renders, instead of in a later loop job; only
    /// callable on the host's loop, outside this host's own render. Lets a runtime layered on the
    /// host know which events a snapshot includes.
    package func drainOnLoop() {
        precondition(loop.inLoop, "drainOnLoop() must be called on the host's loop")
        core.drain()
    }

    /// Applies every queued action now without rendering; only callable on the host's loop,
    /// outside this host's own render. With `renderOnLoop()` after a run of these, a runtime
    /// layered on the host applies a burst of events one at a time (knowing which event caused
    /// each output) and renders once for all of them, as a conflating host would.
    package func applyOnLoop() {
        precondition(loop.inLoop, "applyOnLoop() must be called on the host's loop")
        core.applyQueued()
    }

    /// Applies what is queued, then gives the root new props, without rendering
    /// (`renderOnLoop()` renders); only callable on the host's loop, outside this host's own
    /// render. For a runtime whose props arrive on the loop itself (a worker applying its
    /// parent's UPDATE): `update(workflow:)` would box the props into a mailbox delivery and
    /// schedule a drain job, only for the runtime to drain at once.
    package func updateOnLoop(workflow: WorkflowType) {
        precondition(loop.inLoop, "updateOnLoop(workflow:) must be called on the host's loop")
        core.update(to: workflow)
    }

    /// Runs `body` on the loop with this host's mailbox held busy: values `body` sends to the
    /// host's sinks are only queued, without a drain job scheduled for each, because `body`
    /// applies them itself (`applyOnLoop()`). What is still queued when `body` returns is
    /// drained by the loop as usual. For a runtime that delivers a burst of events and applies
    /// each at once (a worker applying a parent's events one at a time): without the hold, every
    /// event scheduled a drain job that found nothing left to do.
    package func holdingDrains<Result>(_ body: () throws -> Result) rethrows -> Result {
        precondition(loop.inLoop, "holdingDrains(_:) must be called on the host's loop")
        core.mailbox.holdDrains()
        defer { core.mailbox.releaseDrains() }
        return try body()
    }

    /// Renders and publishes if anything was applied since the last pass (see `applyOnLoop()`);
    /// only callable on the host's loop.
    package func renderOnLoop() {
        precondition(loop.inLoop, "renderOnLoop() must be called on the host's loop")
        core.renderIfNeeded()
    }

    /// The tree's snapshot, taken now; only callable on the host's loop.
    package func snapshotOnLoop() -> TreeSnapshot {
        precondition(loop.inLoop, "snapshotOnLoop() must be called on the host's loop")
        return core.snapshot()
    }

    package func stopOnLoop() {
        precondition(loop.inLoop, "stopOnLoop() must be called on the host's loop")
        core.stop()
    }

    /// Tears the tree down: side effects end, workers are cancelled, sinks become no-ops, and the
    /// rendering and output streams finish. Waits until that has happened.
    public func stop() async {
        let core = self.core
        await loop.run { core.stop() }
    }
}

/// The host's tree and its bookkeeping, behind a lock so `Sendable` jobs can reach it.
///
/// Only loop jobs take the lock, one at a time, so it is never contended; it exists to make the
/// confinement checkable by the compiler instead of merely documented.
final class HostCoreBox<W: Workflow>: Sendable where W: Sendable, W.Rendering: Sendable, W.Output: Sendable {
    let mailbox: ActionMailbox
    private let state: Mutex<HostCore<W>>
    /// Output readers are woken once per call below, not once per output (`holdingOutputWakes`).
    private let publication: Publication<W.Rendering, W.Output>

    init(
        workflow: W, options: RuntimeOptions, observers: [any WorkflowObserver], snapshot: TreeSnapshot?,
        mailbox: ActionMailbox, loop: any RuntimeLoop, publication: Publication<W.Rendering, W.Output>
    ) {
        self.mailbox = mailbox
        self.publication = publication
        state = Mutex(HostCore(
            workflow: workflow, options: options, observers: observers, snapshot: snapshot,
            mailbox: mailbox, loop: loop, publication: publication))
        state.withLock { $0.box = self }
    }

    func start() { publication.holdingOutputWakes { state.withLock { $0.start() } } }
    func drain() { publication.holdingOutputWakes { state.withLock { $0.drain() } } }
    func applyQueued() { publication.holdingOutputWakes { state.withLock { $0.applyQueued() } } }
    func update(to workflow: W) { publication.holdingOutputWakes { state.withLock { $0.update(to: workflow) } } }
    func renderIfNeeded() { publication.holdingOutputWakes { state.withLock { $0.renderIfNeeded() } } }
    /// The loop finished settling the pass this host rendered last (`RuntimeLoop.settleRenderPass(resuming:)`).
    func resumeSettling(changed: Bool) { publication.holdingOutputWakes { state.withLock { $0.resumeSettling(changed: changed) } } }
    /// One batch on a sender's thread, which holds the loop's role (`RuntimeLoop.runIfIdle`).
    func drainInline() {
        publication.holdingOutputWakes { state.withLock { $0.drainInline() } }
        mailbox.endInlineDrain()
    }
    func stop() { state.withLock { $0.stop() } }
    func snapshot() -> TreeSnapshot { state.withLock { $0.snapshot() } }
    func liveTree() -> [WorkflowTreeNode] { state.withLock { $0.liveTree() } }
}

/// The loop-confined part of a host.
final class HostCore<W: Workflow> where W: Sendable, W.Rendering: Sendable, W.Output: Sendable {
    private let context: HostContext
    private let publication: Publication<W.Rendering, W.Output>
    private var initialWorkflow: W?
    private var restoreSnapshot: TreeSnapshot?
    private var root: WorkflowNode<W>?
    /// Deliveries taken from the mailbox, applied in order from `nextTaken`.
    private var taken: [Delivery] = []
    private var nextTaken = 0
    /// Waiting for the next published rendering: updates applied since the last publication
    /// (`WorkflowHost.updateAndAwaitRendering`), each a `RootUpdate<W>` with a waiter. Kept as
    /// `AnyObject`: an array of the generic class would look its metadata up on every operation.
    private var renderingReplies: [AnyObject] = []
    /// Whether a rendered pass's settle is under way (`RuntimeLoop.settleRenderPass(resuming:)`):
    /// it is published once it settles; nothing renders meanwhile. A flag of its own, read on
    /// every pass, so the hot path never touches the generic `settling`'s metadata.
    private var isSettling = false
    /// That pass, while `isSettling`.
    private var settling: Settling?
    /// The box holding this core, which the loop resumes a pending settle through.
    weak var box: HostCoreBox<W>?
    /// What a loop calls when a pending settle completes: made once, not per pass.
    private lazy var resume: @Sendable (Bool) -> Void = { [weak box] changed in box?.resumeSettling(changed: changed) }

    private struct Settling {
        var rendering: W.Rendering
        var started: ContinuousClock.Instant?
    }

    init(
        workflow: W, options: RuntimeOptions, observers: [any WorkflowObserver], snapshot: TreeSnapshot?,
        mailbox: ActionMailbox, loop: any RuntimeLoop, publication: Publication<W.Rendering, W.Output>
    ) {
        context = HostContext(
            mailbox: mailbox, options: options, observers: WorkflowObservation.observers(for: observers), loop: loop)
        self.publication = publication
        self.initialWorkflow = workflow
        self.restoreSnapshot = snapshot
    }

    func start() {
        guard let workflow = initialWorkflow else { return }
        initialWorkflow = nil
        context.observers?.forEach { $0.sessionDidBegin(root: stableIdentity(of: W.self).name) }
        let root = WorkflowNode(workflow: workflow, key: "", host: context, snapshot: restoreSnapshot)
        restoreSnapshot = nil
        let publication = self.publication
        root.onOutput = { publication.publish(output: $0) }
        self.root = root
        renderAndPublish()
    }

    /// Applies one slice of what is queued, rendering after each delivery (or once, when
    /// conflating): at most `drainSlice` deliveries of those queued when the drain began (and
    /// whatever a settle's wait made it apply in order with them). The rest, and what arrives
    /// meanwhile, is left to a drain job of its own, behind the loop's other jobs: a worker
    /// emitting without end then cannot keep the loop from stopping this host or serving
    /// another host on it, and another host waits for at most one slice.
    func drain() {
        if nextTaken == taken.count {
            taken.removeAll(keepingCapacity: true)
            nextTaken = 0
            guard context.mailbox.takeAll(into: &taken) else { return }
        }
        let end = min(taken.count, nextTaken + Self.drainSlice)
        while nextTaken < min(taken.count, end) {
            let delivery = taken[nextTaken]
            nextTaken += 1
            apply(delivery)
            if !context.options.conflateStaleRenderings || nextTaken == taken.count || nextTaken == end { renderIfNeeded() }
        }
        context.mailbox.continueDraining(leftover: nextTaken < taken.count)
    }

    /// How many deliveries one drain job applies at most.
    static var drainSlice: Int { 256 }

    /// Applies everything queued without rendering (`WorkflowHost.applyOnLoop`).
    func applyQueued() {
        while let delivery = nextDelivery() { apply(delivery) }
    }

    /// Applies everything queued, then new root props, without rendering
    /// (`WorkflowHost.updateOnLoop`).
    func update(to workflow: W) {
        applyQueued()
        guard let root else { return }
        root.update(workflow: workflow)
        context.needsRender = true
    }

    /// Applies one batch, what is queued now, on a sender's thread that holds the loop's role
    /// (`RuntimeOptions.applySendsInline`), rendering after each delivery (or once, when
    /// conflating). The mailbox stays marked busy until `ActionMailbox.endInlineDrain`, which
    /// hands anything queued meanwhile to the loop's thread. No drain is in progress (the sender
    /// found the mailbox idle), so nothing earlier is left in `taken`.
    func drainInline() {
        taken = context.mailbox.takeBatch()
        nextTaken = 0
        while nextTaken < taken.count {
            let delivery = taken[nextTaken]
            nextTaken += 1
            apply(delivery)
            if !context.options.conflateStaleRenderings || nextTaken == taken.count { renderIfNeeded() }
        }
        taken.removeAll(keepingCapacity: true)
        nextTaken = 0
    }

    /// The oldest delivery not yet applied: first what an earlier `takeAll` took, then the
    /// mailbox's next batch. `nil` when both are empty (the mailbox is then idle again).
    private func nextDelivery() -> Delivery? {
        if nextTaken == taken.count {
            taken.removeAll(keepingCapacity: true)
            nextTaken = 0
            guard context.mailbox.takeAll(into: &taken) else { return nil }
        }
        defer { nextTaken += 1 }
        return taken[nextTaken]
    }

    private func apply(_ delivery: Delivery) {
        guard let root else {
            if case .awaitedUpdate(let update) = delivery { Self.rootUpdate(update).answerStopped() }
            return
        }
        switch delivery {
        case .event(let handler, let value):
            context.deliver(handler: handler, value: value)
        case .updateRoot(let value):
            guard let workflow = value as? W else { return }
            root.update(workflow: workflow)
            context.needsRender = true
        case .awaitedUpdate(let object):
            root.update(workflow: Self.rootUpdate(object).workflow)
            context.needsRender = true
            renderingReplies.append(object)
        }
    }

    /// An awaited root update sent to this host's mailbox, which only `WorkflowHost<W>` sends to,
    /// so it is a `RootUpdate<W>`: taken back without a checked cast.
    @inline(__always)
    private static func rootUpdate(_ object: AnyObject) -> RootUpdate<W> {
        unsafeDowncast(object, to: RootUpdate<W>.self)
    }

    /// Applies, without rendering in between, every delivery already taken and the ones queued
    /// now, in order: results a loop's settle delivered as actions (a remote child's outputs and
    /// the rendering that goes with them) must be applied before the pass that shows them.
    private func applyQueuedInOrder() {
        while nextTaken < taken.count {
            let delivery = taken[nextTaken]
            nextTaken += 1
            apply(delivery)
        }
        taken.removeAll(keepingCapacity: true)
        nextTaken = 0
        // The mailbox stays marked busy while this batch is applied: a drain job it scheduled
        // finds nothing and marks it idle.
        _ = context.mailbox.takeAll(into: &taken)
        while nextTaken < taken.count {
            let delivery = taken[nextTaken]
            nextTaken += 1
            apply(delivery)
        }
    }

    func renderIfNeeded() {
        // Render only when something was applied since the last pass. (Without
        // `renderOnlyIfStateChanged` every applied action sets `needsRender`.) Ignoring the flag
        // in that mode rendered once more at the end of every drain, and once for each event a
        // stale sink delivered to nobody. While a pass settles, what is applied waits for it.
        guard context.needsRender, !isSettling else { return }
        renderAndPublish()
    }

    private func renderAndPublish() {
        guard let root else { return }
        let started = context.observers == nil ? nil : ContinuousClock.now
        publishOnceSettled(renderRoot(root), root: root, started: started)
    }

    /// Publishes `rendering` once the remote work its pass started has settled. A loop that
    /// carries such work waits for it (here, or later: `resumeSettling`); if that changed what the
    /// tree would render, it renders again, so only settled renderings are published. What the
    /// wait delivered as actions is applied first, in order with what was queued.
    @inline(__always)
    private func publishOnceSettled(_ rendering: W.Rendering, root: WorkflowNode<W>, started: ContinuousClock.Instant?) {
        var rendering = rendering
        while true {
            let settle = context.loop.settleRenderPass(resuming: resume)
            switch settle {
            case .settled(changed: false):
                publish(rendering, started: started)
                return
            case .settled(changed: true):
                applyQueuedInOrder()
                rendering = renderRoot(root)
            case .pending:
                awaitSettle(of: rendering, started: started)
                return
            }
        }
    }

    /// Keeps `rendering` until the loop resumes its settle. Out of line: inlined, the generic
    /// `Settling`'s metadata was looked up on every pass, most of which settle at once.
    @inline(never)
    private func awaitSettle(of rendering: W.Rendering, started: ContinuousClock.Instant?) {
        isSettling = true
        settling = Settling(rendering: rendering, started: started)
    }

    /// The loop settled the pass rendered last: publishes it, or renders again first if the wait
    /// changed the tree or something was applied meanwhile.
    func resumeSettling(changed: Bool) {
        guard isSettling, let pending = settling else { return }
        isSettling = false
        settling = nil
        guard let root else { return }
        if changed || context.needsRender {
            applyQueuedInOrder()
            publishOnceSettled(renderRoot(root), root: root, started: pending.started)
        } else {
            publish(pending.rendering, started: pending.started)
        }
    }

    @inline(__always)
    private func publish(_ rendering: W.Rendering, started: ContinuousClock.Instant?) {
        context.needsRender = false
        // Reported just before publishing, so whoever sees the rendering sees it counted.
        if let started {
            let duration = ContinuousClock.now - started
            context.observers?.forEach { $0.renderingWasPublished(after: duration) }
        }
        publication.publish(rendering: rendering)
        if !renderingReplies.isEmpty { answerRenderingReplies { $0.answer(rendering) } }
    }

    /// Answers every update waiting for a rendering (`answer`: with the one published, or that
    /// the host stopped).
    private func answerRenderingReplies(_ answer: (RootUpdate<W>) -> Void) {
        // Swapped out rather than copied (a copy would make the next append allocate), and the
        // storage is put back for the next update unless a reply queued another meanwhile.
        var replies: [AnyObject] = []
        swap(&replies, &renderingReplies)
        for reply in replies { answer(Self.rootUpdate(reply)) }
        replies.removeAll(keepingCapacity: true)
        if renderingReplies.isEmpty { renderingReplies = replies }
    }

    /// Renders the tree; what was applied before is in this pass (`needsRender` cleared).
    private func renderRoot(_ root: WorkflowNode<W>) -> W.Rendering {
        context.mailbox.isRendering.store(true, ordering: .relaxed)
        context.renderPass &+= 1
        context.needsRender = false
        defer { context.mailbox.isRendering.store(false, ordering: .relaxed) }
        return root.render()
    }

    func stop() {
        guard let root else { return }
        root.tearDown()
        self.root = nil
        context.observers?.forEach { $0.sessionDidEnd() }
        publication.finish()
        // Updates waiting for a rendering get none; so do those queued but not applied yet (a
        // later drain would answer them too, but a host stopped from its deinit has none).
        answerRenderingReplies { $0.answerStopped() }
        var queued: [Delivery] = []
        _ = context.mailbox.takeAll(into: &queued)
        let unapplied = taken[nextTaken...] + queued
        taken.removeAll()
        nextTaken = 0
        for case .awaitedUpdate(let update) in unapplied { Self.rootUpdate(update).answerStopped() }
    }

    func snapshot() -> TreeSnapshot {
        root?.snapshot() ?? TreeSnapshot(workflowType: stableIdentity(of: W.self).name, state: nil)
    }

    func liveTree() -> [WorkflowTreeNode] {
        var nodes: [WorkflowTreeNode] = []
        root?.collect(into: &nodes, depth: 0)
        return nodes
    }
}
