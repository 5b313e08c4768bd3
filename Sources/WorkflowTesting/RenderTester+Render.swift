import Workflow

extension RenderTester {
    /// Runs the render pass, checks it against the expectations, lets `assertions` inspect the
    /// rendering, then applies the action the pass led to.
    ///
    /// Sinks in the rendering may be called from `assertions` (that is how a test "taps" a
    /// screen): the resulting action is applied once `assertions` returns. A pass may lead to at
    /// most one action, as a real render pass is followed by one action before the next render;
    /// more than one is a failure and only the first is applied. Sinks sent after `render`
    /// returns are ignored (like sinks of a torn-down workflow). Failures point at
    /// `file` and `line` (or at the `expect…` call for an expectation that was not met).
    @discardableResult
    public func render(
        file: StaticString = #filePath, line: UInt = #line,
        assertions: (WorkflowType.Rendering) throws -> Void
    ) rethrows -> RenderTesterResult<WorkflowType> {
        let context = TestingRenderContext<WorkflowType>(
            workflows: expectedWorkflows,
            workers: expectedWorkers,
            sideEffects: expectedSideEffects,
            location: FailureLocation(file: file, line: line))
        let rendering = workflow.render(state: state, context: context)
        context.finishRender()

        try assertions(rendering)

        let actions = context.collectActions()
        if actions.count > 1 {
            recordFailure(
                "Received multiple actions in a single render test: the render pass of \(WorkflowType.self) led to "
                    + "\(actions.count) actions (\(actions.map(\.origin).joined(separator: ", "))); only the first is applied.",
                file: file, line: line)
        }
        var state = self.state
        var output: WorkflowType.Output?
        if let action = actions.first {
            let applyContext = ApplyContext.make(for: workflow)
            output = action.erased.apply(toState: &state, context: applyContext)
            applyContext.invalidate()
        }
        return RenderTesterResult(initialState: self.state, state: state, output: output, appliedAction: actions.first)
    }

    /// Runs the render pass and checks it against the expectations, without looking at the
    /// rendering: for tests about what the pass declares or what its expected outputs do.
    ///
    /// (A separate overload rather than a defaulted closure, because a defaulted `rethrows`
    /// closure makes every call site need `try`.)
    @discardableResult
    public func render(file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult<WorkflowType> {
        render(file: file, line: line, assertions: { _ in })
    }
}
