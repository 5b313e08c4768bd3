import Workflow

/// What one tested render pass led to: the state and output after applying its action.
///
/// Assertions return the result so they chain; each takes a `file` and `line` so a failure points
/// at the test line that made it.
public struct RenderTesterResult<WorkflowType: Workflow> {
    /// The state after the action (the rendered state if no action was applied).
    public let state: WorkflowType.State
    /// The output the applied action reported to the parent, if any.
    public let output: WorkflowType.Output?
    /// The action that was applied, if any.
    let appliedAction: TestedAction<WorkflowType>?
    /// The state the pass rendered, for `assertStateModifications`.
    let initialState: WorkflowType.State

    init(
        initialState: WorkflowType.State, state: WorkflowType.State, output: WorkflowType.Output?,
        appliedAction: TestedAction<WorkflowType>?
    ) {
        self.initialState = initialState
        self.state = state
        self.output = output
        self.appliedAction = appliedAction
    }

    /// The checks of `output`.
    private var outputCheck: OutputCheck<WorkflowType.Output> { OutputCheck(output: output, reporter: "\(WorkflowType.self)") }

    /// Runs `assertions` on the resulting state: for states that are not `Equatable`, or to check
    /// only the part that matters.
    @discardableResult
    public func assert(state assertions: (WorkflowType.State) throws -> Void) rethrows -> RenderTesterResult {
        try assertions(state)
        return self
    }

    /// Runs `assertions` on the resulting state (workflow-swift's name for `assert(state:)` with
    /// a closure).
    @discardableResult
    public func verifyState(
        file: StaticString = #filePath, line: UInt = #line,
        assertions: (WorkflowType.State) throws -> Void
    ) rethrows -> RenderTesterResult {
        try assert(state: assertions)
    }

    /// Runs `assertions` on the output the workflow reported; a failure if it reported none
    /// (the closure then does not run).
    @discardableResult
    public func verifyOutput(
        file: StaticString = #filePath, line: UInt = #line,
        assertions: (WorkflowType.Output) throws -> Void
    ) rethrows -> RenderTesterResult {
        try outputCheck.verify(file: file, line: line, assertions)
        return self
    }

    /// Runs `assertions` on the applied action, as an `ActionType`; a failure if no action was
    /// applied or it is of another type (the closure then does not run).
    ///
    /// Actions from sinks and expected side effects are seen as they were sent; an action a
    /// parent's output map made for an expected child's or worker's output is seen as the map
    /// returned it (an `AnyWorkflowAction` for inline maps, otherwise its concrete type).
    @discardableResult
    public func verifyAction<ActionType: WorkflowAction>(
        type: ActionType.Type = ActionType.self,
        file: StaticString = #filePath, line: UInt = #line,
        assertions: (ActionType) throws -> Void
    ) rethrows -> RenderTesterResult where ActionType.WorkflowType == WorkflowType {
        let expected = "an action of type \(String(reflecting: ActionType.self))"
        guard let action = appliedAction(as: ActionType.self, expecting: expected, file: file, line: line) else { return self }
        try assertions(action)
        return self
    }

    /// The applied action as an `A`, or `nil` after recording that there was none or it is of
    /// another type; `expected` says what the test expected, for the message.
    private func appliedAction<A: WorkflowAction>(
        as type: A.Type, expecting expected: String, file: StaticString, line: UInt
    ) -> A? where A.WorkflowType == WorkflowType {
        guard let appliedAction else {
            recordFailure("No action was produced: expected \(expected).", file: file, line: line)
            return nil
        }
        guard let action = appliedAction.action(as: A.self) else {
            recordFailure(
                "Expected \(expected), but an action of type \(appliedAction.actionTypeName) "
                    + "(from \(appliedAction.origin)) was applied.",
                file: file, line: line)
            return nil
        }
        return action
    }

    /// Asserts that the workflow reported no output.
    @discardableResult
    public func assertNoOutput(file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        outputCheck.assertNone(file: file, line: line)
        return self
    }

    /// Asserts that the pass led to no action (nothing was tapped, emitted or sent).
    @discardableResult
    public func assertNoAction(file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        if let appliedAction {
            recordFailure(
                "Expected no action, but got \(appliedAction.actionDescription) (from \(appliedAction.origin)).",
                file: file, line: line)
        }
        return self
    }

    /// Asserts that the applied action equals `expected`: the action sent to a sink, given to
    /// `expectSideEffect`, or made by a parent's output map for an expected child's or worker's
    /// output (an inline map's action is an `AnyWorkflowAction`, which is not `Equatable`: check
    /// its effect on state or output instead).
    @discardableResult
    public func assert<Action: WorkflowAction & Equatable>(
        action expected: Action,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTesterResult where Action.WorkflowType == WorkflowType {
        guard let actual = appliedAction(as: Action.self, expecting: "the action \(expected)", file: file, line: line) else {
            return self
        }
        if actual != expected {
            recordFailure(LineDifference(actual: actual, expected: expected).message(subject: "Action"), file: file, line: line)
        }
        return self
    }
}

extension RenderTesterResult where WorkflowType.State: Equatable {
    /// The checks of `state`.
    private var stateCheck: StateCheck<WorkflowType.State> {
        StateCheck(state: state, baseline: initialState, baselineName: "rendered state")
    }

    /// Asserts that the resulting state equals `expected`.
    @discardableResult
    public func assert(state expected: WorkflowType.State, file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        stateCheck.assertEqual(to: expected, file: file, line: line)
        return self
    }

    /// Exhaustive state check: `modifications` changes the rendered state into what the pass's
    /// action should have made of it, and the resulting state must equal the result.
    @discardableResult
    public func assertStateModifications(
        file: StaticString = #filePath, line: UInt = #line,
        _ modifications: (inout WorkflowType.State) throws -> Void
    ) rethrows -> RenderTesterResult {
        try stateCheck.assertModifications(file: file, line: line, modifications)
        return self
    }
}

extension RenderTesterResult where WorkflowType.Output: Equatable {
    /// Asserts that the workflow reported exactly `expected` to its parent.
    @discardableResult
    public func assert(output expected: WorkflowType.Output, file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        outputCheck.assertEqual(to: expected, file: file, line: line)
        return self
    }
}
