import Workflow

extension RenderTester {
    /// Runs the render pass, checks it against the expectations, lets `assertions` inspect the
    /// rendering, then applies the action the pass led to.
    ///
    /// Sinks in the rendering may be called from `assertions` (that is how a test "taps" a
    /// screen): the resulting action is applied once `assertions` returns. A pass should lead to
    /// at most one action, as a real render pass is followed by one action before the next
    /// render; as in workflow-swift, each further action (and each further output) is a failure,
    /// every action is still applied in order, and the result holds the last action and the last
    /// output. Sinks sent after `render`
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
        var state = self.state
        var output: WorkflowType.Output?
        for (index, action) in actions.enumerated() {
            if index > 0 {
                recordFailure(
                    "Received multiple actions in a single render test: \(action.actionDescription) (from \(action.origin)) "
                        + "after \(actions[index - 1].actionDescription) (from \(actions[index - 1].origin)); "
                        + "\(WorkflowType.self)'s render pass led to \(actions.count) actions, each applied in order.",
                    file: file, line: line)
            }
            let applyContext = ApplyContext.make(for: workflow)
            let produced = action.erased.apply(toState: &state, context: applyContext)
            applyContext.invalidate()
            if let produced {
                if let earlier = output {
                    recordFailure(
                        "Received multiple outputs in a single render test: \(produced) (from \(action.origin)) after \(earlier); "
                            + "the result holds the last.",
                        file: file, line: line)
                }
                output = produced
            }
        }
        return RenderTesterResult(initialState: self.state, state: state, output: output, appliedAction: actions.last)
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
