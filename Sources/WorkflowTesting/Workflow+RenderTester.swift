import Workflow

extension Workflow {
    /// A tester that renders this workflow once from `state`, so a test can pin what it renders
    /// and what its events do without running a host, children or workers.
    public func renderTester(initialState state: State) -> RenderTester<Self> {
        RenderTester(workflow: self, state: state)
    }

    /// A tester that renders this workflow once from `makeInitialState()`: the common case of
    /// testing a freshly started workflow.
    public func renderTester() -> RenderTester<Self> {
        renderTester(initialState: makeInitialState())
    }
}
