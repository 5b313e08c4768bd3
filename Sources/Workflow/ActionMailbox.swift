import Synchronization

/// Something sent to a host from outside its loop: a sink event or new root props.
enum Delivery: Sendable {
    /// A value sent through a sink, handled by the handler that sink carries (the one its own
    /// render pass declared) on the node the handler names.
    case event(handler: AnySinkHandler, value: any Sendable)
    /// New props for the root workflow (`WorkflowHost.update(workflow:)`), of the host's type.
    /// Kept as a value: props of up to three words travel without an allocation.
    case updateRoot(any Sendable)
    /// New props and the task waiting for the rendering after them
    /// (`WorkflowHost.updateAndAwaitRendering`): a `RootUpdate` of the host's own workflow type,
    /// which the host takes back with an unchecked downcast (only that host sends to its mailbox).
    case awaitedUpdate(AnyObject & Sendable)
}

/// New props for a host's root and the task waiting for the first rendering published after they
/// were applied (`WorkflowHost.updateAndAwaitRendering`).
///
/// A class, in the delivery as a plain reference, rather than the props as `any Sendable` and the
/// waiter as an existential of a generic struct: copying, destroying and answering those looked
/// the waiter's generic metadata up about twenty times per awaited update and cast the props and
/// the rendering dynamically (≈ 15 k instructions of a remote round trip, measured). A reference
/// is copied by a retain, and the host, which knows its workflow type, reaches the props and the
/// typed waiter without a cast or a lookup. One allocation, as props boxed in `any Sendable`
/// (larger than three words) were; a plain update (`Delivery.updateRoot`) keeps its props as a
/// value, which allocates nothing for small props.
///
/// The waiter is an `UnsafeContinuation`: a checked one allocates its canary and its generic
/// type is looked up wherever it is copied or destroyed (six lookups per update, measured). What
/// the checked one would catch is ruled out here: `answered` lets exactly one answer through,
/// and the host answers every update it takes (`HostCore.apply`, `publish`, `stop`); one dropped
/// unanswered answers itself as it goes (`deinit`).
final class RootUpdate<W: Workflow>: Sendable where W: Sendable, W.Rendering: Sendable {
    let workflow: W
    /// The waiting task; throwing so that its value is the rendering itself (`Optional` of a
    /// generic rendering would be looked up on every resume): "the host stopped" is thrown.
    private let waiter: UnsafeContinuation<W.Rendering, any Error>
    /// Set by the first answer: a waiter is resumed once at most.
    private let answered = Atomic<Bool>(false)

    init(workflow: W, waiter: UnsafeContinuation<W.Rendering, any Error>) {
        self.workflow = workflow
        self.waiter = waiter
    }

    /// Resumes the waiting task with the first rendering published after these props.
    func answer(_ rendering: W.Rendering) {
        guard !answered.exchange(true, ordering: .relaxed) else { return }
        waiter.resume(returning: rendering)
    }

    /// Resumes the waiting task without a rendering: the host stopped first.
    func answerStopped() {
        guard !answered.exchange(true, ordering: .relaxed) else { return }
        waiter.resume(throwing: HostStopped())
    }

    /// An update dropped unanswered (a mailbox that went away with it queued) still lets its task
    /// go: an unsafe continuation never resumed would leave the task waiting for good.
    deinit {
        if !answered.load(ordering: .relaxed) { waiter.resume(throwing: HostStopped()) }
    }
}

/// What a task waiting in `WorkflowHost.updateAndAwaitRendering` is resumed with when the host
/// stops before publishing a rendering after its props (the call returns `nil`).
struct HostStopped: Error {}

/// The queue between sinks (called from any thread) and the host's loop.
///
/// Sending appends under a lock, so deliveries from one thread keep their order; the first
/// delivery into an empty mailbox schedules one drain job on the loop, which takes everything
/// queued at once. That keeps a burst of events to one thread hop.
///
/// With `RuntimeOptions.applySendsInline`, the sender that finds the mailbox idle first asks the
/// loop to run one drain on its own thread (`RuntimeLoop.runIfIdle`). That drain takes one batch
/// (its own value plus whatever arrived meanwhile) and hands anything later to the loop's
/// thread. The "drain scheduled" flag still admits one drainer at a time, so values from one
/// thread keep their order and each is applied once.
final class ActionMailbox: Sendable {
    private struct State {
        var deliveries: [Delivery] = []
        var drainScheduled = false
        /// Set while the loop's own code sends and applies in one go (`holdDrains`): the mailbox
        /// counts as busy, so a send schedules no drain job, and running empty does not make it
        /// idle.
        var held = false
        var drainJobs: DrainJobs?
    }

    /// The host's two drain jobs, in one object. They leave the lock as this reference: a
    /// closure returned through the lock's generic result is re-wrapped on the way (a context
    /// allocated for each closure, in and out) on every send.
    private final class DrainJobs: Sendable {
        let drain: @Sendable () -> Void
        let inline: @Sendable () -> Void

        init(drain: @escaping @Sendable () -> Void, inline: @escaping @Sendable () -> Void) {
            self.drain = drain
            self.inline = inline
        }
    }

    private let state = Mutex(State())
    private let loop: any RuntimeLoop
    private let appliesSendsInline: Bool
    /// Set while the host renders: a sink called then is a programmer error.
    let isRendering = Atomic<Bool>(false)

    init(loop: any RuntimeLoop, appliesSendsInline: Bool = false) {
        self.loop = loop
        self.appliesSendsInline = appliesSendsInline
    }

    /// Installs the job that drains the mailbox and the one-batch drain a sender may run inline
    /// (the host, weakly captured).
    func setDrain(_ drain: @escaping @Sendable () -> Void, inline inlineDrain: @escaping @Sendable () -> Void) {
        let jobs = DrainJobs(drain: drain, inline: inlineDrain)
        state.withLock { $0.drainJobs = jobs }
    }

    func send(_ delivery: Delivery) {
        if isRendering.load(ordering: .relaxed) && loop.inLoop {
            preconditionFailure(
                "A sink was sent a value during render(state:context:). Renders must be free of side effects: "
                    + "send from an event handler, a worker or a side effect instead.")
        }
        let jobs: DrainJobs? = state.withLock { state in
            state.deliveries.append(delivery)
            guard !state.drainScheduled, let jobs = state.drainJobs else { return nil }
            state.drainScheduled = true
            return jobs
        }
        guard let jobs else { return }
        if appliesSendsInline, loop.runIfIdle(jobs.inline) { return }
        loop.execute(jobs.drain)
    }

    /// Takes everything queued, for an inline drain (which holds the drain role until
    /// `endInlineDrain`).
    func takeBatch() -> [Delivery] {
        state.withLock { state in
            let taken = state.deliveries
            state.deliveries = []
            return taken
        }
    }

    /// Ends an inline drain: idle again if nothing arrived meanwhile, otherwise the loop's
    /// thread drains the rest (the sender's thread is not kept busy with other threads' values).
    func endInlineDrain() {
        continueDraining(leftover: false)
    }

    /// Takes everything queued into `taken` (which must be empty; its storage becomes the
    /// mailbox's, so a steady flow of small batches reuses two buffers instead of allocating one
    /// per batch). Returns `false` when nothing is queued, and then marks the mailbox idle, so the
    /// next send schedules (unless drains are held, see `holdDrains`).
    func takeAll(into taken: inout [Delivery]) -> Bool {
        state.withLock { state in
            if state.deliveries.isEmpty {
                if !state.held { state.drainScheduled = false }
                return false
            }
            swap(&state.deliveries, &taken)
            return true
        }
    }

    /// Ends a drain job's slice: idle if nothing is left or arrived meanwhile, otherwise another
    /// drain job is queued for the rest (the mailbox stays scheduled), so the loop runs the jobs
    /// queued before it first. `leftover`: the host still holds deliveries it took. Held drains
    /// (`holdDrains`) are left to `releaseDrains`.
    func continueDraining(leftover: Bool) {
        let jobs: DrainJobs? = state.withLock { state in
            if leftover { return state.drainJobs }
            guard !state.held else { return nil }
            if state.deliveries.isEmpty {
                state.drainScheduled = false
                return nil
            }
            return state.drainJobs
        }
        if let jobs { loop.execute(jobs.drain) }
    }

    /// Marks the mailbox busy while the loop's own code sends values and applies them itself
    /// (`WorkflowHost.holdingDrains`): each send then only queues, without scheduling a drain job
    /// (a closure, a lock and a loop iteration per value, for a job that would find nothing
    /// left). Call on the loop, and `releaseDrains()` after.
    func holdDrains() {
        state.withLock { state in
            state.held = true
            state.drainScheduled = true
        }
    }

    /// Ends `holdDrains`: idle if everything was applied, otherwise the loop drains the rest.
    func releaseDrains() {
        let jobs: DrainJobs? = state.withLock { state in
            state.held = false
            if state.deliveries.isEmpty {
                state.drainScheduled = false
                return nil
            }
            return state.drainJobs
        }
        if let jobs { loop.execute(jobs.drain) }
    }
}
