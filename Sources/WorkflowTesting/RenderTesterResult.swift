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

    init(state: WorkflowType.State, output: WorkflowType.Output?, appliedAction: TestedAction<WorkflowType>?) {
        self.state = state
        self.output = output
        self.appliedAction = appliedAction
    }

    /// Runs `assertions` on the resulting state: for states that are not `Equatable`, or to check
    /// only the part that matters.
    @discardableResult
    public func assert(state assertions: (WorkflowType.State) throws -> Void) rethrows -> RenderTesterResult {
        try assertions(state)
        return self
    }

    /// Asserts that the workflow reported no output.
    @discardableResult
    public func assertNoOutput(file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        if let output {
            recordFailure("Expected no output, but \(WorkflowType.self) reported \(output).", file: file, line: line)
        }
        return self
    }

    /// Asserts that the pass led to no action (nothing was tapped, emitted or sent).
    @discardableResult
    public func assertNoAction(file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        if let appliedAction {
            recordFailure(
                "Expected no action, but an action of type \(appliedAction.actionTypeName) "
                    + "(from \(appliedAction.origin)) was applied.",
                file: file, line: line)
        }
        return self
    }

    /// Asserts that the applied action equals `expected`.
    ///
    /// Only actions the tester saw before erasure can be compared: those sent to sinks and those
    /// given to `expectSideEffect`. An action produced by a parent's output map (for a child's or
    /// worker's output) reaches the tester type-erased; comparing it is reported as a failure
    /// explaining why, and the test should assert on state or output instead.
    @discardableResult
    public func assert<Action: WorkflowAction & Equatable>(
        action expected: Action,
        file: StaticString = #filePath, line: UInt = #line
    ) -> RenderTesterResult where Action.WorkflowType == WorkflowType {
        guard let appliedAction else {
            recordFailure("Expected the action \(expected), but no action was applied.", file: file, line: line)
            return self
        }
        guard let concrete = appliedAction.concrete else {
            recordFailure(
                "The applied action (\(appliedAction.actionTypeName), from \(appliedAction.origin)) was produced by an "
                    + "output map and is type-erased, so it cannot be compared with \(expected); assert on state or output.",
                file: file, line: line)
            return self
        }
        guard let actual = concrete as? Action else {
            recordFailure(
                "Expected the action \(expected), but an action of type \(appliedAction.actionTypeName) was applied: \(concrete).",
                file: file, line: line)
            return self
        }
        if actual != expected {
            recordFailure("Expected the action \(expected), but \(actual) was applied.", file: file, line: line)
        }
        return self
    }
}

extension RenderTesterResult where WorkflowType.State: Equatable {
    /// Asserts that the resulting state equals `expected`.
    @discardableResult
    public func assert(state expected: WorkflowType.State, file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        if state != expected {
            recordFailure("State \(state) is not equal to the expected \(expected).", file: file, line: line)
        }
        return self
    }
}

extension RenderTesterResult where WorkflowType.Output: Equatable {
    /// Asserts that the workflow reported exactly `expected` to its parent.
    @discardableResult
    public func assert(output expected: WorkflowType.Output, file: StaticString = #filePath, line: UInt = #line) -> RenderTesterResult {
        guard let output else {
            recordFailure("Expected the output \(expected), but \(WorkflowType.self) reported none.", file: file, line: line)
            return self
        }
        if output != expected {
            recordFailure("Output \(output) is not equal to the expected \(expected).", file: file, line: line)
        }
        return self
    }
}
