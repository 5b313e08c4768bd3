import Workflow

/// Tests actions in isolation: applies them one after another to a state and checks the result.
///
/// Actions hold a workflow's logic; testing them directly (without rendering) pins that logic
/// with the least setup. Each `send` applies one action with a fresh `ApplyContext` for the
/// tester's workflow (props), like the runtime does, and records that action's output.
///
///     TicTacToeWorkflow.Action
///         .tester(withState: state)
///         .send(action: .tap(index: 2))
///         .assert(output: .won(.x))
///
/// The checks carry workflow-swift's names too (`verifyState`, `verifyOutput`,
/// `assertStateModifications`), so action tests written for it run unchanged. Failures are
/// reported to the framework running the test (Swift Testing or XCTest) at the caller's line.
///
/// A value type: `send` returns a new tester, so intermediate testers can be reused.
public struct WorkflowActionTester<WorkflowType: Workflow, Action: WorkflowAction> where Action.WorkflowType == WorkflowType {
    /// The workflow (props) the actions read through their context; `nil` when none was given and
    /// none can be made (see `WorkflowAction.tester(withState:workflow:)`).
    let workflow: WorkflowType?
    /// The state the tester was created with, for `assertStateModifications`.
    let initialState: WorkflowType.State
    /// The state after the actions sent so far.
    public private(set) var state: WorkflowType.State
    /// The output of the last action sent, if it reported one.
    public private(set) var output: WorkflowType.Output?

    init(workflow: WorkflowType?, state: WorkflowType.State) {
        self.workflow = workflow
        self.initialState = state
        self.state = state
    }

    /// Applies `action` to the current state; the new tester holds the new state and its output.
    ///
    /// Without a workflow (see `WorkflowAction.tester(withState:workflow:)`) the action is applied
    /// all the same; reading a prop is then the failure.
    @discardableResult
    public func send(action: Action, file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        var tester = self
        let context = workflow.map { ApplyContext.make(for: $0) } ?? ApplyContext.withoutProps { keyPath, readsAsNil in
            let message = "Attempted to read value \(keyPath), when applying an action, but no value was present. "
                + "Pass an instance of the Workflow to the ActionTester to enable this functionality: "
                + "tester(withState:workflow:), or conform \(WorkflowType.self) to DefaultInitializableWorkflow."
            if readsAsNil { recordFailure(message + " The value read as nil.", file: file, line: line) }
            return message
        }
        tester.output = action.apply(toState: &tester.state, context: context)
        context.invalidate()
        return tester
    }

    /// The checks of `output`.
    private var outputCheck: OutputCheck<WorkflowType.Output> { OutputCheck(output: output, reporter: "the last action") }

    /// Runs `assertions` on the current state: for states that are not `Equatable`, or to check
    /// only the part that matters.
    @discardableResult
    public func assert(state assertions: (WorkflowType.State) throws -> Void) rethrows -> WorkflowActionTester {
        try assertions(state)
        return self
    }

    /// Runs `assertions` on the current state (workflow-swift's name for `assert(state:)` with a
    /// closure).
    @discardableResult
    public func verifyState(_ assertions: (WorkflowType.State) throws -> Void) rethrows -> WorkflowActionTester {
        try assert(state: assertions)
    }

    /// Runs `assertions` on the last action's output; a failure if it reported none (the
    /// closure then does not run).
    @discardableResult
    public func verifyOutput(
        file: StaticString = #filePath, line: UInt = #line,
        _ assertions: (WorkflowType.Output) throws -> Void
    ) rethrows -> WorkflowActionTester {
        try outputCheck.verify(file: file, line: line, assertions)
        return self
    }

    /// Asserts that the last action reported no output.
    @discardableResult
    public func assertNoOutput(file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        outputCheck.assertNone(file: file, line: line)
        return self
    }
}

extension WorkflowActionTester where WorkflowType.State: Equatable {
    /// The checks of `state`.
    private var stateCheck: StateCheck<WorkflowType.State> {
        StateCheck(state: state, baseline: initialState, baselineName: "initial state")
    }

    /// Asserts that the current state equals `expected`.
    @discardableResult
    public func assert(state expected: WorkflowType.State, file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        stateCheck.assertEqual(to: expected, file: file, line: line)
        return self
    }

    /// Exhaustive state check: `modifications` changes the tester's initial state into what the
    /// actions sent should have made of it, and the current state must equal the result. Says
    /// what changed rather than restating the whole state.
    @discardableResult
    public func assertStateModifications(
        file: StaticString = #filePath, line: UInt = #line,
        _ modifications: (inout WorkflowType.State) throws -> Void
    ) rethrows -> WorkflowActionTester {
        try stateCheck.assertModifications(file: file, line: line, modifications)
        return self
    }
}

extension WorkflowActionTester where WorkflowType.Output: Equatable {
    /// Asserts that the last action reported exactly `expected`.
    @discardableResult
    public func assert(output expected: WorkflowType.Output, file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        outputCheck.assertEqual(to: expected, file: file, line: line)
        return self
    }
}
