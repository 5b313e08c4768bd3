import Foundation

/// A one-shot value handed from a loop thread to a thread that waits for it.
///
/// `@unchecked Sendable` is sound: the value is only touched under `condition`'s lock.
final class ResultSlot<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?

    func fulfil(_ newValue: T) {
        condition.lock()
        value = newValue
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> T {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value { return value }
            condition.wait()
        }
    }
}
