import Workflow

/// Tests one render pass of a workflow in isolation.
///
/// A render pass should be a pure function of props and state that *declares* children, workers,
/// side effects and sinks. The tester checks those declarations against expectations (an expected
/// child that is not rendered, or a rendered child that is not expected, is a failure), answers
/// children with canned renderings instead of running them, and applies the one action the pass
/// leads to (a sink event sent from the assertions, an expected child or worker output, or an
/// expected side effect's action) so the test can check the resulting state and output.
///
/// Build it with `workflow.renderTester()`, add expectations, then call `render`:
///
///     EmailBrowserWorkflow()
///         .renderTester()
///         .expectWorkflow(type: InboxWorkflow.self, key: "inbox", producingRendering: inbox, producingOutput: 3)
///         .render { screen in … }
///         .assert { state in #expect(state.selection == 3) }
///
/// A value type: each builder method returns a new tester, so a base tester can be shared.
public struct RenderTester<WorkflowType: Workflow> {
    /// The workflow (props) under test.
    let workflow: WorkflowType
    /// The state the pass renders.
    let state: WorkflowType.State
    /// The children the pass must render.
    var expectedWorkflows: [ExpectedWorkflow] = []
    /// The workers the pass must run.
    var expectedWorkers: [ExpectedWorker] = []
    /// The side effects the pass must declare.
    var expectedSideEffects: [ExpectedSideEffect<WorkflowType>] = []

    init(workflow: WorkflowType, state: WorkflowType.State) {
        self.workflow = workflow
        self.state = state
    }

    /// Expects the pass to render a child of type `type` with `key`.
    ///
    /// The child is not run: the tester returns `rendering` in its place, calls `assertions` with
    /// the child value (to check the props the parent passed down) and, when `output` is given,
    /// maps it through the parent's output map as if the child had emitted it after the pass and
    /// applies the resulting action.
    public func expectWorkflow<Child: Workflow>(
        type: Child.Type,
        key: String = "",
        producingRendering rendering: Child.Rendering,
        producingOutput output: Child.Output? = nil,
        file: StaticString = #filePath, line: UInt = #line,
        assertions: @escaping (Child) -> Void = { _ in }
    ) -> RenderTester {
        // A second identical expectation is accepted, as in workflow-swift: rendering the child
        // twice is then the failure ("Multiple Workflows of type …"), reported at render.
        var tester = self
        tester.expectedWorkflows.append(ExpectedWorkflow(
            workflowType: Child.self,
            key: key,
            rendering: rendering,
            output: output.map { $0 as Any },
            assertions: { child in
                if let child = child as? Child { assertions(child) }
            },
            location: FailureLocation(file: file, line: line)))
        return tester
    }

    /// Expects the pass to render a child of type `type` with `key`, answering `rendering`, and
    /// states that the test does not make it produce an output: workflow-swift's
    /// `expectWorkflowIgnoringOutput`, for children whose output type cannot be written in the
    /// test (an output that is an action of a private type, say).
    public func expectWorkflowIgnoringOutput<Child: Workflow>(
        type: Child.Type,
        key: String = "",
        producingRendering rendering: Child.Rendering,
        file: StaticString = #filePath, line: UInt = #line,
        assertions: @escaping (Child) -> Void = { _ in }
    ) -> RenderTester {
        expectWorkflow(
            type: type, key: key, producingRendering: rendering, producingOutput: nil,
            file: file, line: line, assertions: assertions)
    }

    /// Expects a child whose rendering is `Void`, so there is no rendering to supply.
    public func expectWorkflow<Child: Workflow>(
        type: Child.Type,
        key: String = "",
        producingOutput output: Child.Output? = nil,
        file: StaticString = #filePath, line: UInt = #line,
        assertions: @escaping (Child) -> Void = { _ in }
    ) -> RenderTester where Child.Rendering == Void {
        expectWorkflow(
            type: type, key: key, producingRendering: (), producingOutput: output,
            file: file, line: line, assertions: assertions)
    }

    /// Expects the pass to declare the side effect `key`.
    ///
    /// The side effect's closure is not run (it would start real work); when `action` is given it
    /// is applied after the pass as if the side effect had sent it.
    public func expectSideEffect<Action: WorkflowAction>(
        key: AnyHashable,
        producingAction action: Action?,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester where Action.WorkflowType == WorkflowType {
        var tester = self
        tester.expectedSideEffects.append(ExpectedSideEffect(
            key: key,
            action: action.map { TestedAction($0, origin: "side effect \(key)") },
            location: FailureLocation(file: file, line: line)))
        return tester
    }

    /// Expects the pass to declare the side effect `key`, with no action resulting from it.
    public func expectSideEffect(
        key: AnyHashable,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        expectSideEffect(key: key, producingAction: AnyWorkflowAction<WorkflowType>?.none, file: file, line: line)
    }

    /// Expects the pass to run a worker equivalent (`isEquivalent(to:)`) to `worker` with `key`.
    ///
    /// The worker is not started; when `output` is given it is mapped through the parent's output
    /// map as if the worker had produced it and the resulting action is applied after the pass.
    public func expectWorker<W: Worker>(
        _ worker: W,
        key: String = "",
        producingOutput output: W.Output? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        appendingWorker(
            worker, key: key, output: output, file: file, line: line,
            isEquivalent: { ($0 as? W).map(worker.isEquivalent(to:)) ?? false })
    }

    /// Expects the pass to run an asynchronous-sequence worker equivalent to `worker` with `key`;
    /// `output` stands for one element of its sequence.
    public func expectWorker<W: AsyncSequenceWorker>(
        _ worker: W,
        key: String = "",
        producingOutput output: W.Output? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        appendingWorker(
            worker, key: key, output: output, file: file, line: line,
            isEquivalent: { ($0 as? W).map(worker.isEquivalent(to:)) ?? false })
    }

    /// Expects the pass to run a worker equivalent to `worker` with `key`, answering `output` as
    /// if the worker had produced it: workflow-swift's spelling (`mockingOutput:` before `key:`).
    /// `output` is required here so that `expectWorker(worker)` alone stays unambiguous.
    public func expectWorker<W: Worker>(
        _ worker: W,
        mockingOutput output: W.Output?,
        key: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        expectWorker(worker, key: key, producingOutput: output, file: file, line: line)
    }

    /// Expects the pass to run an asynchronous-sequence worker equivalent to `worker` with `key`,
    /// answering `output` as one element of its sequence (workflow-swift's spelling).
    public func expectWorker<W: AsyncSequenceWorker>(
        _ worker: W,
        mockingOutput output: W.Output?,
        key: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        expectWorker(worker, key: key, producingOutput: output, file: file, line: line)
    }

    private func appendingWorker<W: Sendable, Output: Sendable>(
        _ worker: W,
        key: String,
        output: Output?,
        file: StaticString,
        line: UInt,
        isEquivalent: @escaping (any Sendable) -> Bool
    ) -> RenderTester {
        var tester = self
        tester.expectedWorkers.append(ExpectedWorker(
            workerType: W.self,
            key: key,
            workerDescription: String(describing: worker),
            isEquivalent: isEquivalent,
            output: output,
            location: FailureLocation(file: file, line: line)))
        return tester
    }
}

extension RenderTester {
    /// Expects the pass to run a worker equivalent to `worker` with `key`: WorkflowConcurrency
    /// testing's spelling of `expectWorker(_:key:producingOutput:)`.
    public func expect<W: Worker>(
        worker: W,
        producingOutput output: W.Output? = nil,
        key: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTester {
        expectWorker(worker, key: key, producingOutput: output, file: file, line: line)
    }
}
