import Synchronization
import Tracing

/// What the loop thread publishes for other threads to read: statuses, workers, counters.
final class RuntimeSharedState: Sendable {
    private struct State {
        /// Every remote child's status by tree (`SessionLoop.treePrefix(of:)`), then by path,
        /// with its type: one tree's are read without looking at every tree's, and a change
        /// updates one small table (all of them are gathered only when asked for).
        var statusesByTree: [String: [String: TreeChildStatus]] = [:]
        var workerNames: [String] = []
        var isWelcomed = false
        var counters = WorkerCounters()
        var statusSubscribers: [UInt64: AsyncStream<RemoteChildStatusChange>.Continuation] = [:]
        var workerSubscribers: [UInt64: AsyncStream<Void>.Continuation] = [:]
        var refusalSubscribers: [UInt64: AsyncStream<JoinRefusal>.Continuation] = [:]
        var refusal: JoinRefusal?
        var stoppedWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped = false
        var nextID: UInt64 = 0
        /// The context of the last traced flush the parent applied, not taken yet.
        var tracedFlush: ServiceContext?
    }

    private let state = Mutex(State())
    /// `WorkerCounters.messagesFromParent` and `messagesToParent`, counted once per ZeroMQ
    /// message: atomics, not the state's lock, on a path that costs a round trip a few hundred
    /// instructions in all.
    private let messagesFromParent = Atomic<Int>(0)
    private let messagesToParent = Atomic<Int>(0)

    var statuses: [String: RemoteChildStatus] {
        state.withLock { state in
            var all: [String: RemoteChildStatus] = [:]
            for tree in state.statusesByTree.values {
                for (path, child) in tree { all[path] = child.status }
            }
            return all
        }
    }
    var workerNames: [String] { state.withLock { $0.workerNames } }
    var isWelcomed: Bool { state.withLock { $0.isWelcomed } }
    var counters: WorkerCounters {
        var counters = state.withLock { $0.counters }
        counters.messagesFromParent = messagesFromParent.load(ordering: .relaxed)
        counters.messagesToParent = messagesToParent.load(ordering: .relaxed)
        return counters
    }

    /// A ZeroMQ message was read from the parent.
    func countMessageFromParent() {
        messagesFromParent.add(1, ordering: .relaxed)
    }

    /// `by` ZeroMQ messages were sent to the parent (-1: the one counted did not leave).
    func countMessagesToParent(_ by: Int) {
        messagesToParent.add(by, ordering: .relaxed)
    }

    /// The parent applied a traced flush (`SpanNames.applyFlush`): the next rendering pushed to
    /// a client continues that trace (`takeTracedFlush`). Called only when tracing.
    func noteTracedFlush(_ context: ServiceContext) {
        state.withLock { $0.tracedFlush = context }
    }

    /// The context `noteTracedFlush` kept, forgotten here; `nil` when there is none.
    func takeTracedFlush() -> ServiceContext? {
        state.withLock { state in
            defer { state.tracedFlush = nil }
            return state.tracedFlush
        }
    }

    /// The statuses of the children of one tree (`SessionLoop.treePrefix(of:)`), by path.
    func statuses(ofTree tree: String) -> [TreeChildStatus] {
        state.withLock { Array(($0.statusesByTree[tree] ?? [:]).values) }
    }

    func setStatus(_ status: RemoteChildStatus?, path: String, typeName: String) {
        let tree = SessionLoop.treePrefix(of: path)
        let subscribers = state.withLock { state in
            if let status {
                state.statusesByTree[tree, default: [:]][path] = TreeChildStatus(path: path, typeName: typeName, status: status)
            } else if state.statusesByTree[tree]?.removeValue(forKey: path) != nil, state.statusesByTree[tree]?.isEmpty == true {
                state.statusesByTree[tree] = nil
            }
            return Array(state.statusSubscribers.values)
        }
        if let status {
            for subscriber in subscribers { subscriber.yield(RemoteChildStatusChange(path: path, status: status)) }
        }
    }

    func setWorkers(_ names: [String]) {
        let subscribers = state.withLock { state in
            state.workerNames = names.sorted()
            return Array(state.workerSubscribers.values)
        }
        for subscriber in subscribers { subscriber.yield() }
    }

    func setWelcomed(_ welcomed: Bool) {
        state.withLock { state in
            state.isWelcomed = welcomed
            if welcomed { state.refusal = nil }
        }
    }

    /// The parent refused the HELLO: remembered until a later one is welcomed.
    func refuse(_ refusal: JoinRefusal) {
        let subscribers = state.withLock { state in
            state.refusal = refusal
            return Array(state.refusalSubscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(refusal) }
    }

    /// The current refusal, if any, then each new one.
    func subscribeRefusals() -> AsyncStream<JoinRefusal> {
        let (stream, continuation) = AsyncStream<JoinRefusal>.makeStream()
        let (id, current, stopped) = state.withLock { state in
            state.nextID += 1
            state.refusalSubscribers[state.nextID] = continuation
            return (state.nextID, state.refusal, state.stopped)
        }
        if let current { continuation.yield(current) }
        if stopped { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.refusalSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func count(_ update: (inout WorkerCounters) -> Void) {
        state.withLock { update(&$0.counters) }
    }

    func subscribe() -> AsyncStream<RemoteChildStatusChange> {
        let (stream, continuation) = AsyncStream<RemoteChildStatusChange>.makeStream()
        let id = state.withLock { state in
            state.nextID += 1
            state.statusSubscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.statusSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// A stream that yields once now and on every change of the worker list.
    func subscribeWorkers() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextID += 1
            state.workerSubscribers[state.nextID] = continuation
            return state.nextID
        }
        continuation.yield()
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.workerSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func markStopped() {
        let (waiters, statusSubs, workerSubs, refusalSubs) = state.withLock { state in
            state.stopped = true
            defer {
                state.stoppedWaiters = []
                state.statusSubscribers = [:]
                state.workerSubscribers = [:]
                state.refusalSubscribers = [:]
            }
            return (
                state.stoppedWaiters, Array(state.statusSubscribers.values), Array(state.workerSubscribers.values),
                Array(state.refusalSubscribers.values)
            )
        }
        refusalSubs.forEach { $0.finish() }
        waiters.forEach { $0.resume() }
        statusSubs.forEach { $0.finish() }
        workerSubs.forEach { $0.finish() }
    }

    func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.stopped { return true }
                state.stoppedWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
