import Testing
import Workflow

// A worker that emits without end must not take its host's loop for itself: the drain applies
// what was queued when it began and leaves what arrives meanwhile to a job of its own, behind the
// loop's other jobs (the host's stop, another host's update on a shared loop). Before, the drain
// took new deliveries as long as any arrived, and `stop()` never ran.

/// An `AsyncSequenceWorker` whose sequence yields until its task is cancelled, pausing only for
/// `Task.yield()`: its outputs arrive about as fast as the host applies them.
struct EndlessWorker: AsyncSequenceWorker {
    typealias Output = Int
    func run() -> AsyncStream<Int> {
        let counter = Counter()
        return AsyncStream(unfolding: {
            guard !Task.isCancelled else { return nil }
            await Task.yield()
            return counter.increment()
        })
    }
    func isEquivalent(to otherWorker: EndlessWorker) -> Bool { true }
}

/// Counts its endless worker's outputs.
struct EndlessCountingWorkflow: Workflow, Sendable {
    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<EndlessCountingWorkflow>) -> Int {
        EndlessWorker().running(in: context, key: "endless") { _ in
            AnyWorkflowAction { state in
                state += 1
                return nil
            }
        }
        return state
    }
}

/// A counter moved by its root props only.
struct PropsEcho: Workflow, Sendable {
    var value: Int
    func makeInitialState() -> Void { () }
    func render(state: Void, context: RenderContext<PropsEcho>) -> Int { value }
}

@Suite("A worker emitting without end does not take the loop for itself")
struct LoopFairnessTests {
    @Test("its host stops while it emits")
    func hostStopsWhileItsWorkerEmits() async throws {
        let host = WorkflowHost(workflow: EndlessCountingWorkflow())
        try await rendering(of: host) { $0 >= 100 }
        try await withSafetyTimeout("stopping a host whose worker emits without end") { await host.stop() }
        let stopped = host.rendering
        #expect(stopped >= 100)
    }

    @Test("another host on the same loop is served while it emits")
    func anotherHostOnTheLoopIsServed() async throws {
        let loop = ThreadLoop(name: "fairness")
        let busy = WorkflowHost(workflow: EndlessCountingWorkflow(), loop: loop)
        let quiet = WorkflowHost(workflow: PropsEcho(value: 0), loop: loop)
        try await rendering(of: busy) { $0 >= 100 }
        for value in 1...20 {
            let shown = try await withSafetyTimeout("updating a host beside one whose worker emits without end") {
                await quiet.updateAndAwaitRendering(workflow: PropsEcho(value: value))
            }
            #expect(shown == value)
        }
        try await withSafetyTimeout("stopping both hosts") {
            await busy.stop()
            await quiet.stop()
        }
        loop.shutdown()
    }
}
