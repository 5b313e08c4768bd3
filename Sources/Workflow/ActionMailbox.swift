import Synchronization

/// Something sent to a host from outside its loop: a sink event or new root props.
enum Delivery: Sendable {
    /// A value sent through a sink of node `node`, handled by its handler registered under `handler`.
    case event(node: UInt64, handler: SinkHandlerKey, value: any Sendable)
    /// New props for the root workflow.
    case updateRoot(any Sendable)
}

/// Identifies which `makeSink` call of a node a sink came from: the event and action types.
struct SinkHandlerKey: Hashable, Sendable {
    let event: ObjectIdentifier
    let action: ObjectIdentifier
    /// Which of the pass's `makeSink` calls with these same two types made the sink (0 for the
    /// first). Without it, two sinks of one event and action type (`onPlus`/`onMinus`, both
    /// `Void` → `Action`) shared a single handler: the last one declared. Sinks stay valid across
    /// passes because a pass declares its sinks in the same order each time.
    var ordinal: Int = 0
}

/// The queue between sinks (called from any thread) and the host's loop.
///
/// Sending appends under a lock, so deliveries from one thread keep their order; the first
/// delivery into an empty mailbox schedules one drain job on the loop, which takes everything
/// queued at once. That keeps a burst of events to one thread hop.
final class ActionMailbox: Sendable {
    private struct State {
        var deliveries: [Delivery] = []
        var drainScheduled = false
        var drain: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let loop: any RuntimeLoop
    /// Set while the host renders: a sink called then is a programmer error.
    let isRendering = Atomic<Bool>(false)

    init(loop: any RuntimeLoop) {
        self.loop = loop
    }

    /// Installs the job that drains the mailbox (the host, weakly captured).
    func setDrain(_ drain: @escaping @Sendable () -> Void) {
        state.withLock { $0.drain = drain }
    }

    func send(_ delivery: Delivery) {
        if isRendering.load(ordering: .relaxed) && loop.inLoop {
            preconditionFailure(
                "A sink was sent a value during render(state:context:). Renders must be free of side effects: "
                    + "send from an event handler, a worker or a side effect instead.")
        }
        let job: (@Sendable () -> Void)? = state.withLock { state in
            state.deliveries.append(delivery)
            guard !state.drainScheduled, let drain = state.drain else { return nil }
            state.drainScheduled = true
            return drain
        }
        if let job { loop.execute(job) }
    }

    /// Takes everything queued; when nothing is, marks the mailbox idle so the next send schedules.
    func takeAll() -> [Delivery] {
        state.withLock { state in
            if state.deliveries.isEmpty {
                state.drainScheduled = false
                return []
            }
            let taken = state.deliveries
            state.deliveries = []
            return taken
        }
    }
}
