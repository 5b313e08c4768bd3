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
/// A value type: `send` returns a new tester, so intermediate testers can be reused.
public struct WorkflowActionTester<WorkflowType: Workflow, Action: WorkflowAction> where Action.WorkflowType == WorkflowType {
    /// The workflow (props) the actions read through their context.
    public let workflow: WorkflowType
    /// The state after the actions sent so far.
    public private(set) var state: WorkflowType.State
    /// The output of the last action sent, if it reported one.
    public private(set) var output: WorkflowType.Output?

    init(workflow: WorkflowType, state: WorkflowType.State) {
        self.workflow = workflow
        self.state = state
    }

    /// Applies `action` to the current state; the new tester holds the new state and its output.
    public func send(action: Action) -> WorkflowActionTester {
        var tester = self
        let context = ApplyContext.make(for: workflow)
        tester.output = action.apply(toState: &tester.state, context: context)
        context.invalidate()
        return tester
    }

    /// Runs `assertions` on the current state: for states that are not `Equatable`, or to check
    /// only the part that matters.
    @discardableResult
    public func assert(state assertions: (WorkflowType.State) throws -> Void) rethrows -> WorkflowActionTester {
        try assertions(state)
        return self
    }

    /// Asserts that the last action reported no output.
    @discardableResult
    public func assertNoOutput(file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        if let output {
            recordFailure("Expected no output, but the last action reported \(output).", file: file, line: line)
        }
        return self
    }
}

extension WorkflowActionTester where WorkflowType.State: Equatable {
    /// Asserts that the current state equals `expected`.
    @discardableResult
    public func assert(state expected: WorkflowType.State, file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        if state != expected {
            recordFailure("State \(state) is not equal to the expected \(expected).", file: file, line: line)
        }
        return self
    }
}

extension WorkflowActionTester where WorkflowType.Output: Equatable {
    /// Asserts that the last action reported exactly `expected`.
    @discardableResult
    public func assert(output expected: WorkflowType.Output, file: StaticString = #filePath, line: UInt = #line) -> WorkflowActionTester {
        guard let output else {
            recordFailure("Expected the output \(expected), but the last action reported none.", file: file, line: line)
            return self
        }
        if output != expected {
            recordFailure("Output \(output) is not equal to the expected \(expected).", file: file, line: line)
        }
        return self
    }
}
