import Synchronization

/// Hands the latest value to any number of readers, each through a buffer of one (newest wins).
///
/// A new reader starts with the current value; a slow reader skips values instead of queueing
/// them (renderings of a screen: only the latest matters). `finish()` ends every stream.
package final class LatestValueBroadcast<Value: Sendable>: Sendable {
    private struct State {
        var latest: Value?
        /// In subscription order; few per value (a session's streams), so a list: publishing
        /// hands it out as it is (a dictionary's values were copied into an array, unspecialized,
        /// for every rendering).
        var subscribers: [(id: UInt64, continuation: AsyncStream<Value>.Continuation)] = []
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = Mutex(State())

    package init() {}

    /// The latest value published, if any.
    package var latest: Value? { state.withLock { $0.latest } }

    /// How many readers' streams are open (for tests: an ended reader is forgotten).
    package var readerCount: Int { state.withLock { $0.subscribers.count } }

    /// Makes `value` the latest and hands it to every reader.
    package func publish(_ value: Value) {
        let subscribers = state.withLock { state in
            state.latest = value
            return state.subscribers
        }
        for subscriber in subscribers { subscriber.continuation.yield(value) }
    }

    /// A stream of the values, starting with the latest; ends at once after `finish()`.
    package func subscribe() -> AsyncStream<Value> {
        subscription().values
    }

    /// A stream of the values, as `subscribe()`, and a function that hands this reader the
    /// latest value again: a reader that passed over a value it could not act on yet (a client
    /// whose window was full) asks for it once it can, without a task of its own waiting for it.
    package func subscription() -> (values: AsyncStream<Value>, again: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let again: @Sendable () -> Void = { [weak self] in
            if let latest = self?.latest { continuation.yield(latest) }
        }
        let id: UInt64? = state.withLock { state in
            if let latest = state.latest { continuation.yield(latest) }
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers.append((state.nextID, continuation))
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return (stream, again)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers.removeAll { $0.id == id } }
        }
        return (stream, again)
    }

    /// Ends every stream, present and future.
    package func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [] }
            return state.subscribers
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
