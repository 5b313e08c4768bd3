import Synchronization

/// Hands a host's renderings and outputs to readers on any thread.
///
/// Renderings go to each subscriber through a buffer of one (newest wins), outputs through an
/// unbounded buffer: a slow screen may skip frames, but a slow consumer of outputs must not lose
/// any.
final class Publication<Rendering: Sendable, Output: Sendable>: Sendable {
    private struct State {
        var latest: Rendering?
        var renderingSubscribers: [UInt64: AsyncStream<Rendering>.Continuation] = [:]
        var outputSubscribers: [UInt64: OutputQueue<Output>] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())
    /// `outputSubscribers`' queues, kept as an array (copying them out of the dictionary for
    /// each output allocated an array per output) under a lock of their own, of a type that is
    /// not generic: reading them through the generic `State` cost two generic metadata lookups
    /// per output. Each is an `OutputQueue<Output>`. Written with `state` locked, after it.
    private let outputTargets = Mutex<[AnyObject]>([])
    private let listener: HostListener<Rendering, Output>?
    /// How many output subscribers there are, readable without the lock: a host nobody
    /// subscribes to for outputs (a worker's hosted child, whose outputs go to its listener)
    /// publishes each output without taking the lock.
    private let outputSubscriberCount = Atomic<Int>(0)
    /// How deep `holdingOutputWakes` calls are nested (only the host's loop calls it).
    private let outputWakesHeld = Atomic<Int>(0)
    /// Whether each rendering is kept for `latestRendering` (`HostListener.keepsLatestRendering`).
    private let keepsLatest: Bool
    /// Set (for good) by the first `subscribeRenderings`: until then a host that keeps no latest
    /// rendering publishes without taking the lock.
    private let renderingsSubscribed = Atomic<Bool>(false)

    init(listener: HostListener<Rendering, Output>? = nil) {
        self.listener = listener
        keepsLatest = listener?.keepsLatestRendering ?? true
    }

    var latestRendering: Rendering {
        precondition(keepsLatest, "WorkflowHost.rendering read from a host whose listener keeps no latest rendering")
        return state.withLock { state in
            guard let latest = state.latest else {
                preconditionFailure("WorkflowHost.rendering read before the first render pass completed")
            }
            return latest
        }
    }

    func publish(rendering: Rendering) {
        listener?.onRendering(rendering)
        // A hosted child's host: its listener takes every rendering and nobody reads it again.
        // The lock, the copy into `state` and the generic metadata of both cost about 3.8 k
        // instructions per render pass, a tenth of a remote child's props change on its worker.
        guard keepsLatest || renderingsSubscribed.load(ordering: .acquiring) else { return }
        // Without subscribers (a host whose renderings are awaited, not streamed) nothing is
        // copied out: the array and its element type's metadata cost more than the store.
        let subscribers: [AsyncStream<Rendering>.Continuation]? = state.withLock { state in
            state.latest = rendering
            return state.renderingSubscribers.isEmpty ? nil : Array(state.renderingSubscribers.values)
        }
        guard let subscribers else { return }
        for subscriber in subscribers { subscriber.yield(rendering) }
    }

    /// How many output subscriptions are live (for tests: a dropped or cancelled stream is not).
    var outputSubscriberTotal: Int { state.withLock { $0.outputSubscribers.count } }

    func publish(output: Output) {
        listener?.onOutput(output)
        guard outputSubscriberCount.load(ordering: .acquiring) > 0 else { return }
        let subscribers = outputTargets.withLock { $0 }
        let wake = outputWakesHeld.load(ordering: .relaxed) == 0
        for subscriber in subscribers { unsafeDowncast(subscriber, to: OutputQueue<Output>.self).push(output, wake: wake) }
    }

    /// Copies `state`'s output subscribers to `outputTargets`; called with `state` locked.
    private func updateOutputTargets(_ state: State) {
        outputTargets.withLock { $0 = state.outputSubscribers.values.map { $0 as AnyObject } }
    }

    /// Runs `body` (the host applying actions, on its loop) with output readers left waiting
    /// until it returns, then wakes each once: a flush of hundreds of outputs costs a reader one
    /// resume instead of one per output. Outputs published outside such a call wake at once.
    func holdingOutputWakes<Result>(_ body: () throws -> Result) rethrows -> Result {
        outputWakesHeld.add(1, ordering: .relaxed)
        defer {
            if outputWakesHeld.subtract(1, ordering: .relaxed).newValue == 0, outputSubscriberCount.load(ordering: .acquiring) > 0 {
                for subscriber in outputTargets.withLock({ $0 }) { unsafeDowncast(subscriber, to: OutputQueue<Output>.self).wake() }
            }
        }
        return try body()
    }

    func subscribeRenderings() -> AsyncStream<Rendering> {
        renderingsSubscribed.store(true, ordering: .releasing)
        return subscribe(
            bufferingPolicy: .bufferingNewest(1), startingWithLatest: true,
            register: { state, id, continuation in state.renderingSubscribers[id] = continuation },
            unregister: { state, id in _ = state.renderingSubscribers.removeValue(forKey: id) })
    }

    /// A stream of every output from now on, over its own `OutputQueue`. The subscription ends
    /// when the stream is dropped (`OutputSubscription`'s deinit), its task is cancelled, or the
    /// host stops (after the queued outputs are read).
    func subscribeOutputs() -> AsyncStream<Output> {
        let queue = OutputQueue<Output>()
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.outputSubscribers[state.nextID] = queue
            updateOutputTargets(state)
            outputSubscriberCount.add(1, ordering: .releasing)
            return state.nextID
        }
        guard let id else {
            queue.finish()
            return AsyncStream(unfolding: { await queue.next() })
        }
        let subscription = OutputSubscription(queue: queue) { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                if state.outputSubscribers.removeValue(forKey: id) != nil {
                    self.updateOutputTargets(state)
                    self.outputSubscriberCount.subtract(1, ordering: .releasing)
                }
            }
        }
        return AsyncStream(unfolding: { await subscription.queue.next() }, onCancel: { subscription.cancel() })
    }

    /// Registers a new stream through `register`; a stream made after `finish()` ends at once.
    ///
    /// The subscriber table is chosen by the two closures (they capture nothing), not by a key
    /// path: a key path into the generic `State` is instantiated from its mangled pattern on
    /// every call, a costly step of every subscription.
    private func subscribe<Element>(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        startingWithLatest: Bool,
        register: (inout State, UInt64, AsyncStream<Element>.Continuation) -> Void,
        unregister: @escaping @Sendable (inout State, UInt64) -> Void
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: bufferingPolicy)
        let id: UInt64? = state.withLock { state in
            if startingWithLatest, let latest = state.latest as? Element { continuation.yield(latest) }
            guard !state.finished else { return nil }
            state.nextID += 1
            register(&state, state.nextID, continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { unregister(&$0, id) }
        }
        return stream
    }

    func finish() {
        let (renderings, outputs) = state.withLock { state in
            state.finished = true
            defer {
                state.renderingSubscribers = [:]
                state.outputSubscribers = [:]
                updateOutputTargets(state)
                outputSubscriberCount.store(0, ordering: .releasing)
            }
            return (Array(state.renderingSubscribers.values), Array(state.outputSubscribers.values))
        }
        renderings.forEach { $0.finish() }
        outputs.forEach { $0.finish() }
    }
}

/// An output stream's hold on its queue: when the stream is dropped (its unfolding closures
/// released), the publication stops queueing outputs for it.
private final class OutputSubscription<Output: Sendable>: Sendable {
    let queue: OutputQueue<Output>
    private let unregister: @Sendable () -> Void

    init(queue: OutputQueue<Output>, unregister: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.unregister = unregister
    }

    /// The reading task was cancelled: the stream ends now and unregisters.
    func cancel() {
        queue.cancel()
        unregister()
    }

    deinit { unregister() }
}

/// Synchronous callbacks on the host's loop for each published rendering and output.
///
/// For runtimes built on top of the host (the remote worker forwards each rendering and output
/// of a hosted child over the wire the moment it is published, without a thread hop).
package struct HostListener<Rendering: Sendable, Output: Sendable>: Sendable {
    let onRendering: @Sendable (Rendering) -> Void
    let onOutput: @Sendable (Output) -> Void
    /// Whether the host also keeps each rendering for `WorkflowHost.rendering` (and for a stream
    /// of renderings that starts with the latest). `false` for a host whose listener is the only
    /// reader of its renderings (a worker's hosted child): `rendering` must then not be read,
    /// and a stream subscribed later starts with the next rendering.
    let keepsLatestRendering: Bool

    public init(
        onRendering: @escaping @Sendable (Rendering) -> Void, onOutput: @escaping @Sendable (Output) -> Void, keepsLatestRendering: Bool = true
    ) {
        self.onRendering = onRendering
        self.onOutput = onOutput
        self.keepsLatestRendering = keepsLatestRendering
    }
}
