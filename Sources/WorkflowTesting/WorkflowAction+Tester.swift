import Workflow

extension WorkflowAction {
    /// A tester that applies actions of this type to `state`, for `workflow` (the props the
    /// actions read through their `ApplyContext`).
    public static func tester(withState state: WorkflowType.State, workflow: WorkflowType) -> WorkflowActionTester<WorkflowType, Self> {
        WorkflowActionTester(workflow: workflow, state: state)
    }
}

extension WorkflowAction where WorkflowType: DefaultInitializableWorkflow {
    /// A tester that applies actions of this type to `state`, for the workflow's default props:
    /// saves spelling out a workflow value the actions do not depend on.
    public static func tester(withState state: WorkflowType.State) -> WorkflowActionTester<WorkflowType, Self> {
        tester(withState: state, workflow: WorkflowType())
    }
}
