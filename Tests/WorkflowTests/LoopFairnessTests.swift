import Synchronization
import Testing
import Workflow

// A tree whose deliveries never run out must not take its host's loop for itself: the drain
// applies a slice of what is queued and leaves the rest to a drain job of its own, behind the
// loop's other jobs (the host's stop, another host's update on a shared loop). Before, the drain
// took new deliveries for as long as any arrived, and `stop()` never ran.
//
// The endless deliveries come from the tree itself, on the loop's thread: each tick's action sends
// the next tick (as a worker emitting without pause would, but without loading the test
// process's concurrency pool or growing the mailbox).

/// Where the chain's action finds the sink to send the next tick to (set after the first render).
final class TickRelay: Sendable {
    private let sink = Mutex<Sink<Void>?>(nil)
    func set(_ newSink: Sink<Void>) { sink.withLock { $0 = newSink } }
    func next() { _ = sink.withLock { $0 }?.send(()) }
}

/// Counts ticks; each tick's action sends the next, so its mailbox is never empty.
struct EndlessTicksWorkflow: Workflow, Sendable {
    struct Rendering: Sendable {
        var ticks: Int
        var onTick: Sink<Void>
    }
    let relay: TickRelay
    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<EndlessTicksWorkflow>) -> Rendering {
        let relay = self.relay
        let onTick = context.makeSink(of: Void.self) { _ in
            AnyWorkflowAction<EndlessTicksWorkflow> { state in
                state += 1
                relay.next()
                return nil
            }
        }
        return Rendering(ticks: state, onTick: onTick)
    }
}

/// A counter moved by its root props only.
struct PropsEcho: Workflow, Sendable {
    var value: Int
    func makeInitialState() -> Void { () }
    func render(state: Void, context: RenderContext<PropsEcho>) -> Int { value }
}

@Suite("Deliveries that never run out do not take the loop for themselves")
struct LoopFairnessTests {
    /// A host whose ticks have started and never stop.
    static func endless(loop: (any RuntimeLoop)? = nil) async throws -> WorkflowHost<EndlessTicksWorkflow> {
        let relay = TickRelay()
        let host = WorkflowHost(workflow: EndlessTicksWorkflow(relay: relay), loop: loop)
        relay.set(host.rendering.onTick)
        relay.next()
        try await rendering(of: host) { $0.ticks >= 100 }
        return host
    }

    @Test("the host stops while its ticks go on")
    func hostStopsWhileItsTicksGoOn() async throws {
        let host = try await Self.endless()
        try await withSafetyTimeout("stopping a host whose ticks never run out") { await host.stop() }
        #expect(host.rendering.ticks >= 100)
    }

    @Test("another host on the same loop is served while they go on")
    func anotherHostOnTheLoopIsServed() async throws {
        let loop = ThreadLoop(name: "fairness")
        let busy = try await Self.endless(loop: loop)
        let quiet = WorkflowHost(workflow: PropsEcho(value: 0), loop: loop)
        for value in 1...20 {
            let shown = try await withSafetyTimeout("updating a host beside one whose ticks never run out") {
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
