import Synchronization
import Testing
import Workflow

// A worker that stops being rendered must tell its work so, whatever kind of worker it is: a
// sequence's `onCancel` (AsyncStream(unfolding:onCancel:)) must run, or whatever the sequence
// holds (a subscription, a socket) leaks. The sequence learns of the cancellation only inside
// `next()`, so the runtime must ask it for one more element after cancelling, even when the
// cancellation lands between two elements (the busy sequence below makes that the common case).

/// What the workers below report.
enum CancellationEvent: Sendable, Hashable {
    case started, cancelled
}

/// The worker kinds a workflow can run, each over a sequence whose `onCancel` reports.
enum WorkerKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// A `Worker` whose `run()` waits on the sequence.
    case worker
    /// An `AsyncOperationWorker` whose operation waits on the sequence.
    case operation
    /// An `AsyncSequenceWorker` whose sequence waits after its first element.
    case waitingSequence
    /// An `AsyncSequenceWorker` whose sequence yields elements without pause.
    case busySequence

    var testDescription: String { rawValue }
}

/// How many elements a busy sequence yields without pause before it waits: enough that a
/// cancellation usually lands while they flow, bounded so that the host's mailbox does not grow
/// faster than the host applies it.
let busyElements = 200

/// A sequence that reports `.cancelled` from its `onCancel`; it yields `busyElements` elements
/// without pause when `busy` (one element otherwise), then waits until cancelled.
func reportingSequence(probe: Probe<CancellationEvent>, busy: Bool) -> AsyncStream<Int> {
    let (never, _) = AsyncStream<Never>.makeStream()
    let count = Counter()
    return AsyncStream(unfolding: {
        let produced = count.increment()
        if produced == 1 { probe.record(.started) }
        if produced <= (busy ? busyElements : 1) {
            await Task.yield()
            return produced
        }
        for await _ in never {}
        return nil
    }, onCancel: { probe.record(.cancelled) })
}

/// A thread-safe counter for the sequence's closure.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
}

struct WaitingWorker: Worker {
    typealias Output = Int
    let probe: Probe<CancellationEvent>
    func run() async -> Int {
        for await element in reportingSequence(probe: probe, busy: false) where element > 1 { return element }
        return 0
    }
    func isEquivalent(to otherWorker: WaitingWorker) -> Bool { true }
}

struct ReportingSequenceWorker: AsyncSequenceWorker {
    typealias Output = Int
    let probe: Probe<CancellationEvent>
    let busy: Bool
    func run() -> AsyncStream<Int> { reportingSequence(probe: probe, busy: busy) }
    func isEquivalent(to otherWorker: ReportingSequenceWorker) -> Bool { true }
}

/// Runs a worker of `kind` while `kind` is set; its outputs count in the state.
struct CancellingParentWorkflow: Workflow, Sendable {
    let probe: Probe<CancellationEvent>
    var kind: WorkerKind?

    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<CancellingParentWorkflow>) -> Int {
        let count = AnyWorkflowAction<CancellingParentWorkflow> { state in
            state += 1
            return nil
        }
        switch kind {
        case .worker:
            WaitingWorker(probe: probe).running(in: context, key: "w") { _ in count }
        case .operation:
            let probe = self.probe
            AsyncOperationWorker {
                for await element in reportingSequence(probe: probe, busy: false) where element > 1 { return element }
                return 0
            }.running(in: context, key: "w") { _ in count }
        case .waitingSequence:
            ReportingSequenceWorker(probe: probe, busy: false).running(in: context, key: "w") { _ in count }
        case .busySequence:
            ReportingSequenceWorker(probe: probe, busy: true).running(in: context, key: "w") { _ in count }
        case nil:
            break
        }
        return state
    }
}

/// Returns once the calling task is cancelled (at once if it already is).
func untilCancelled() async {
    let (parked, release) = AsyncStream<Never>.makeStream()
    await withTaskCancellationHandler {
        for await _ in parked {}
    } onCancel: {
        release.finish()
    }
}

/// A sequence that, like `AsyncStream(unfolding:onCancel:)`, hears of a cancellation only while it
/// is asked for an element, and whose first element is handed over only once the consuming task
/// has been cancelled: the cancellation lands between two elements every time.
struct HandsOverAfterCancellation: AsyncSequence, Sendable {
    typealias Element = Int
    let probe: Probe<CancellationEvent>

    struct AsyncIterator: AsyncIteratorProtocol {
        let probe: Probe<CancellationEvent>
        var asked = 0

        mutating func next() async -> Int? {
            asked += 1
            if asked == 1 {
                probe.record(.started)
                await untilCancelled()
                return 1
            }
            let probe = self.probe
            return await withTaskCancellationHandler {
                await untilCancelled()
                return nil
            } onCancel: {
                probe.record(.cancelled)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(probe: probe) }
}

struct HandsOverAfterCancellationWorker: AsyncSequenceWorker {
    typealias Output = Int
    let probe: Probe<CancellationEvent>
    func run() -> HandsOverAfterCancellation { HandsOverAfterCancellation(probe: probe) }
    func isEquivalent(to otherWorker: HandsOverAfterCancellationWorker) -> Bool { true }
}

/// Runs a `HandsOverAfterCancellationWorker` while `running`.
struct HandsOverParentWorkflow: Workflow, Sendable {
    let probe: Probe<CancellationEvent>
    var running: Bool
    typealias State = Void

    func render(state: Void, context: RenderContext<HandsOverParentWorkflow>) {
        if running {
            HandsOverAfterCancellationWorker(probe: probe).running(in: context, key: "w") { _ in
                AnyWorkflowAction<HandsOverParentWorkflow>.noAction
            }
        }
    }
}

@Suite struct WorkerCancellationTests {
    @Test("a worker no longer rendered cancels its sequence, which hears it", arguments: WorkerKind.allCases)
    func noLongerRendered(kind: WorkerKind) async throws {
        let probe = Probe<CancellationEvent>()
        let host = WorkflowHost(workflow: CancellingParentWorkflow(probe: probe, kind: kind))
        #expect(try await probe.next(1) == [.started])
        if kind == .busySequence {
            // Elements are flowing: the cancellation will most likely land between two of them.
            try await rendering(of: host) { $0 >= 3 }
        }
        host.update(workflow: CancellingParentWorkflow(probe: probe, kind: nil))
        #expect(try await probe.next(1) == [.cancelled])
        await host.stop()
    }

    /// The cancellation lands between two elements, every time: the sequence hands its first
    /// element over only once the worker's task is cancelled. A runtime that then returned
    /// without asking the sequence for the next element would never let it hear the cancellation.
    @Test("a worker cancelled between two elements asks its sequence once more, which hears the cancellation")
    func cancelledBetweenElements() async throws {
        let probe = Probe<CancellationEvent>()
        let host = WorkflowHost(workflow: HandsOverParentWorkflow(probe: probe, running: true))
        #expect(try await probe.next(1) == [.started])
        host.update(workflow: HandsOverParentWorkflow(probe: probe, running: false))
        #expect(try await probe.next(1) == [.cancelled])
        await host.stop()
    }

    @Test("stopping the host cancels a running worker's sequence, which hears it", arguments: WorkerKind.allCases)
    func hostStopped(kind: WorkerKind) async throws {
        let probe = Probe<CancellationEvent>()
        let host = WorkflowHost(workflow: CancellingParentWorkflow(probe: probe, kind: kind))
        #expect(try await probe.next(1) == [.started])
        await host.stop()
        #expect(try await probe.next(1) == [.cancelled])
    }
}
