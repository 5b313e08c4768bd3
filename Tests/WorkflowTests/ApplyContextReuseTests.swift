import Testing
@_spi(WorkflowRuntime) import Workflow

// A node reuses the context of its last applied action for the next one, but only when nothing
// else refers to it: a context an action let escape must stay invalid, and a reused context
// must not carry the outputs of the action before.

/// Each event is an action that emits `emits` outputs through the context (as a runtime's own
/// actions do) and returns one more; with `keepContext`, the action stores its context in the
/// state (letting it escape), and any later action reads through the kept one.
struct ContextKeepingWorkflow: Workflow, Sendable {
    var label = "k"

    struct State {
        var kept: ApplyContext<ContextKeepingWorkflow>?
    }

    struct Event: Sendable {
        var emits: Int
        var keepContext = false
    }

    typealias Output = String

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<ContextKeepingWorkflow>) -> Sink<Event> {
        context.makeSink(of: Event.self) { event in
            AnyWorkflowAction<ContextKeepingWorkflow> { state, context in
                // A context kept by an earlier action was invalidated when that action returned:
                // reading through it is a programmer error (and traps), even though the node has
                // applied other actions since.
                if let kept = state.kept { _ = kept[workflowValue: \.label] }
                if event.keepContext { state.kept = context }
                for index in 0..<event.emits { context.emitOutput("emitted \(index)") }
                return "returned"
            }
        }
    }
}

@Suite struct ApplyContextReuseTests {
    @Test func aReusedContextCarriesNoOutputsOfTheActionBefore() async throws {
        let host = WorkflowHost(workflow: ContextKeepingWorkflow())
        let outputs = host.outputs
        let sink = host.rendering
        sink.send(.init(emits: 2))
        sink.send(.init(emits: 0))
        sink.send(.init(emits: 1))
        #expect(
            try await next(6, from: outputs) == [
                "emitted 0", "emitted 1", "returned",
                "returned",
                "emitted 0", "returned",
            ])
        await host.stop()
    }

    @Test func aContextAnActionKeptStaysInvalidAfterLaterActions() async {
        await #expect(processExitsWith: .failure) {
            let host = WorkflowHost(workflow: ContextKeepingWorkflow())
            let outputs = host.outputs
            let sink = host.rendering
            // The first action keeps its context; had the node reused that context for the next
            // action, it would be valid again and the read through it would not trap.
            sink.send(.init(emits: 0, keepContext: true))
            sink.send(.init(emits: 0))
            // Both actions' outputs: reached only if the second action did not trap.
            var iterator = outputs.makeAsyncIterator()
            _ = await iterator.next()
            _ = await iterator.next()
        }
    }
}
