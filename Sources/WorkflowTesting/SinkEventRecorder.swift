import Synchronization

/// Collects the events sent to the sinks a tested render pass handed out.
///
/// Sinks are `Sendable` and may be called from any thread, so the recorder guards its storage
/// with a `Mutex`; the (non-`Sendable`) handlers that turn events into actions stay with the
/// render context and run on the test's thread when the tester collects the events. Once closed
/// (the tester has applied its action), later sends are dropped, like sends to a torn-down
/// workflow in the runtime.
final class SinkEventRecorder: Sendable {
    /// One event, tagged with the index of the sink handler it was sent to.
    struct Event: Sendable {
        let handler: Int
        let value: any Sendable
    }

    private struct Storage {
        var events: [Event] = []
        var isOpen = true
    }

    private let storage = Mutex(Storage())

    /// Records `value` as sent to sink handler `handler`, unless the recorder is closed.
    func record(handler: Int, value: any Sendable) {
        storage.withLock { storage in
            if storage.isOpen { storage.events.append(Event(handler: handler, value: value)) }
        }
    }

    /// Stops recording and returns what was recorded, in the order it was sent.
    func close() -> [Event] {
        storage.withLock { storage in
            storage.isOpen = false
            let events = storage.events
            storage.events = []
            return events
        }
    }
}
