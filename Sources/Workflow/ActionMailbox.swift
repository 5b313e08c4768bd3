import Synchronization

/// Something sent to a host from outside its loop: a sink event or new root props.
enum Delivery: Sendable {
    /// A value sent through a sink, handled by the handler that sink carries (the one its own
    /// render pass declared) on the node the handler names.
    case event(handler: AnySinkHandler, value: any Sendable)
    /// New props for the root workflow.
    case updateRoot(any Sendable)
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
