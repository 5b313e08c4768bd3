/// A workflow turns its props (the workflow value itself) and private `State` into a `Rendering`,
/// and may report `Output` to its parent.
///
/// Workflows are values: a parent creates a fresh one on every render pass, and the runtime keeps
/// the *state* alive across passes for as long as a child of the same type and key is rendered.
/// That is why props live on `Self` and everything that must survive a pass lives in `State`.
public protocol Workflow<Rendering, Output>: AnyWorkflowConvertible {
    /// The private state this workflow keeps between render passes.
    associatedtype State

    /// What the workflow reports to its parent; `Never` documents (and enforces) that it reports nothing.
    associatedtype Output = Never

    /// What a render pass produces: typically a plain value with event handlers (sinks).
    associatedtype Rendering

    /// The state a newly started workflow begins with.
    func makeInitialState() -> State

    /// Called when the parent renders this workflow again with new props, so the workflow can
    /// reconcile its state with them. The default does nothing.
    func workflowDidChange(from previousWorkflow: Self, state: inout State)

    /// Produces the rendering for `state`. Must be free of side effects: use `context` to render
    /// children, make sinks, run side effects and workers. `context` is invalid once this returns.
    func render(state: State, context: RenderContext<Self>) -> Rendering
}

extension Workflow {
    public func workflowDidChange(from previousWorkflow: Self, state: inout State) {}
}

extension Workflow where State == Void {
    /// Stateless workflows need no initial state.
    public func makeInitialState() -> State { () }
}

extension Workflow {
    public func asAnyWorkflow() -> AnyWorkflow<Rendering, Output> {
        AnyWorkflow(self)
    }
}
