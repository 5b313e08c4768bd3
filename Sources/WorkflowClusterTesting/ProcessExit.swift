import Foundation
import Synchronization

/// A process's exit status, once known, and the tasks waiting for it.
///
/// A class (not a `Mutex` stored in `DaemonProcess`) so that the process's termination handler
/// can hold it without holding the `DaemonProcess`, which owns the `Process`. Waiting honours
/// cancellation, so a safety timeout around it really ends the wait.
final class ProcessExit: Sendable {
    private struct State {
        var status: Int32?
        var waiters: [UUID: CheckedContinuation<Int32?, Never>] = [:]
    }

    private let state = Mutex(State())

    /// The status, or `nil` while the process runs.
    var status: Int32? { state.withLock { $0.status } }

    /// Records the status and wakes the waiters.
    func record(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume(returning: status) }
    }

    /// Waits for the status; `nil` if the waiting task is cancelled first.
    func wait() async -> Int32? {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let status = state.withLock { state -> Int32?? in
                    if let status = state.status { return .some(status) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let status { continuation.resume(returning: status) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}
