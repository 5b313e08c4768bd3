/// A sink that changes its workflow's state directly, without declaring an action type:
/// workflow-swift's `StateMutationSink`, made with `context.makeStateMutationSink()`.
///
/// For screens whose events are plain edits (a text field bound to `state.name`). The mutation
/// is applied like any action, on the host's loop and in order; it reports no output.
public struct StateMutationSink<WorkflowType: Workflow>: Sendable {
    /// A change to apply: a `Sendable` closure, since sinks may be sent to from any thread.
    struct Mutation: Sendable {
        let apply: @Sendable (inout WorkflowType.State) -> Void
    }

    let sink: Sink<Mutation>

    /// Applies `update` to the workflow's current state.
    public func send(_ update: @escaping @Sendable (inout WorkflowType.State) -> Void) {
        sink.send(Mutation(apply: update))
    }

    /// Sets the state's `keyPath` to `value`.
    public func send<Value: Sendable>(_ keyPath: WritableKeyPath<WorkflowType.State, Value> & Sendable, value: Value) {
        send { state in state[keyPath: keyPath] = value }
    }
}

extension RenderContext {
    /// Makes a sink whose values are edits of this workflow's state (see `StateMutationSink`).
    /// Like every sink, it is dropped once a render pass no longer makes one.
    public func makeStateMutationSink() -> StateMutationSink<WorkflowType> {
        StateMutationSink(sink: makeSink(of: StateMutationSink<WorkflowType>.Mutation.self) { mutation in
            AnyWorkflowAction<WorkflowType> { state in
                mutation.apply(&state)
                return nil
            }
        })
    }
}
