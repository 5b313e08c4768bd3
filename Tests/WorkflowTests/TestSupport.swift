import Dispatch
import Synchronization
import Testing
import Workflow

// Shared helpers for the Workflow behaviour tests. Nothing here sleeps to synchronise: tests wait
// on the host's streams or on probes fed by the workflows, and the only timer is a generous safety
// net that fails a test instead of letting it hang.

/// How long any single wait may take before the test fails. Generous: the suite must pass on a
/// loaded 2-core machine, and the timeout only ever fires when something is broken.
let safetyTimeout: Duration = .seconds(120)

/// A wait that hit `safetyTimeout` or whose stream ended first.
struct WaitFailure: Error, CustomStringConvertible {
    let description: String
}

enum TimeoutOutcome<T: Sendable>: Sendable {
    case finished(T)
    case timedOut
}

/// Runs `operation`, racing it against `safetyTimeout`; throws `WaitFailure` if the timeout wins.
/// `operation` must honour cancellation (iterating an `AsyncStream` does).
func withSafetyTimeout<T: Sendable>(
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    return try await withThrowingTaskGroup(of: TimeoutOutcome<T>.self) { group in
        group.addTask { .finished(try await operation()) }
        group.addTask {
            try? await Task.sleep(for: safetyTimeout)
            // A grace after the deadline: a stalled machine wakes the timer and the operation
            // together, and an operation whose result arrived meanwhile should win.
            try? await Task.sleep(for: .seconds(2))
            return .timedOut
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw WaitFailure(description: "\(what): no result") }
        switch first {
        case .finished(let value): return value
        case .timedOut: throw WaitFailure(description: "\(what): timed out after \(safetyTimeout)")
        }
    }
}

/// Iterates `host.renderings` until a rendering satisfies `predicate` and returns it.
///
/// The stream starts with the current rendering, so a change that already happened is not missed.
@discardableResult
func rendering<W>(
    of host: WorkflowHost<W>,
    where predicate: @escaping @Sendable (W.Rendering) -> Bool
) async throws -> W.Rendering {
    try await withSafetyTimeout("waiting for a rendering of \(W.self)") {
        for await rendering in host.renderings where predicate(rendering) {
            return rendering
        }
        throw WaitFailure(description: "renderings of \(W.self) finished before the predicate held")
    }
}

/// Takes the next `count` elements of `stream` (subscribe before triggering what produces them).
func next<T: Sendable>(_ count: Int, from stream: AsyncStream<T>) async throws -> [T] {
    try await withSafetyTimeout("waiting for \(count) × \(T.self)") {
        var taken: [T] = []
        if count == 0 { return taken }
        for await element in stream {
            taken.append(element)
            if taken.count == count { return taken }
        }
        throw WaitFailure(description: "stream of \(T.self) finished after \(taken.count) of \(count) elements")
    }
}

/// A channel from a workflow (or worker, or side effect) back to the test: every event is both
/// logged (for synchronous inspection) and streamed (for awaiting).
final class Probe<Event: Sendable>: Sendable {
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let logged = Mutex<[Event]>([])

    init() {
        (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
    }

    func record(_ event: Event) {
        logged.withLock { $0.append(event) }
        continuation.yield(event)
    }

    /// Everything recorded so far.
    var log: [Event] { logged.withLock { $0 } }

    /// Awaits the next `count` recorded events (in recording order).
    func next(_ count: Int) async throws -> [Event] {
        try await WorkflowTests.next(count, from: events)
    }
}

/// Records every observer callback, in order.
final class RecordingObserver: WorkflowObserver {
    enum Event: Sendable, Equatable {
        case sessionBegan(root: String)
        case sessionEnded
        case rendered(path: String)
        case actionApplied(action: String, path: String, producedOutput: Bool)
        case snapshotRejected(path: String, reason: String)
    }

    private let recorded = Mutex<[Event]>([])

    var events: [Event] { recorded.withLock { $0 } }

    /// How many times the workflow at `path` has rendered.
    func renderCount(of path: String) -> Int {
        events.filter { $0 == .rendered(path: path) }.count
    }

    func sessionDidBegin(root: String) { recorded.withLock { $0.append(.sessionBegan(root: root)) } }
    func sessionDidEnd() { recorded.withLock { $0.append(.sessionEnded) } }
    func workflowDidRender(path: String) { recorded.withLock { $0.append(.rendered(path: path)) } }
    func actionWasApplied(action: String, path: String, producedOutput: Bool) {
        recorded.withLock { $0.append(.actionApplied(action: action, path: path, producedOutput: producedOutput)) }
    }
    func snapshotWasRejected(path: String, reason: String) {
        recorded.withLock { $0.append(.snapshotRejected(path: path, reason: reason)) }
    }
}

/// The path the runtime gives the root workflow of type `W` (and observers report).
func rootPath<W: Workflow>(_ type: W.Type) -> String { "/" + W.workflowTypeName }

/// The path of a child of type `W` rendered with `key` under `parent`.
func childPath<W: Workflow>(_ type: W.Type, key: String, under parent: String) -> String {
    parent + "/" + (key.isEmpty ? W.workflowTypeName : "\(W.workflowTypeName)[\(key)]")
}

/// Holds a loop still so that events pile up in the host's mailbox, then lets it go: makes
/// "several events already queued" deterministic without any timing.
final class LoopGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// Queues a job that blocks `loop` until `open()`.
    init(closing loop: any RuntimeLoop) {
        let semaphore = self.semaphore
        loop.execute { semaphore.wait() }
    }

    func open() { semaphore.signal() }
}

// MARK: - A counter, the workhorse of many tests

/// Counts taps; its props carry a label (so props changes are observable) and it reports every
/// multiple of `reportEvery` as output.
struct CounterWorkflow: Workflow, Sendable {
    var label: String = ""
    var reportEvery: Int = .max

    struct State: Codable, Equatable, Sendable {
        var count = 0
        /// How many times `workflowDidChange` was called.
        var propsChanges = 0
        /// The label before the latest props change.
        var previousLabel: String?
    }

    typealias Output = Int

    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = CounterWorkflow
        case increment
        case add(Int)

        func apply(toState state: inout State, context: ApplyContext<CounterWorkflow>) -> Int? {
            switch self {
            case .increment: state.count += 1
            case .add(let amount): state.count += amount
            }
            let every = context[workflowValue: \.reportEvery]
            return state.count % every == 0 ? state.count : nil
        }
    }

    func makeInitialState() -> State { State() }

    func workflowDidChange(from previousWorkflow: CounterWorkflow, state: inout State) {
        state.propsChanges += 1
        state.previousLabel = previousWorkflow.label
    }

    func render(state: State, context: RenderContext<CounterWorkflow>) -> CounterScreen {
        let sink = context.makeSink(of: Action.self)
        return CounterScreen(
            label: label, count: state.count, propsChanges: state.propsChanges, previousLabel: state.previousLabel,
            onIncrement: sink.contraMap { .increment }, onAdd: sink.contraMap { .add($0) })
    }
}

struct CounterScreen: Sendable {
    var label: String
    var count: Int
    var propsChanges: Int
    var previousLabel: String?
    var onIncrement: Sink<Void>
    var onAdd: Sink<Int>
}
