import Synchronization

/// The first of an operation's answer and a deadline: the operation is not waited for past the
/// deadline (a store call that hangs keeps running, unawaited, until its own timeout).
final class FirstOf<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value?, Never>?>

    private init(_ continuation: CheckedContinuation<Value?, Never>) {
        self.continuation = Mutex(continuation)
    }

    private func resume(_ value: Value?) {
        continuation.withLock { pending in
            pending?.resume(returning: value)
            pending = nil
        }
    }

    /// `operation`'s answer, or `nil` if `deadline` passes first.
    static func race(until deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async -> Value) async -> Value? {
        var timer: Task<Void, Never>?
        let value = await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let first = FirstOf(continuation)
            Task { first.resume(await operation()) }
            timer = Task {
                guard (try? await Task.sleep(until: deadline)) != nil else { return }
                first.resume(nil)
            }
        }
        timer?.cancel()
        return value
    }
}
