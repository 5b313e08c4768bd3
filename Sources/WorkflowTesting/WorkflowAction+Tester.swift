import Workflow

extension WorkflowAction {
    /// A tester that applies actions of this type to `state`, as workflow-swift's
    /// `tester(withState:workflow:)` does.
    ///
    /// `workflow` holds the props the actions read through their `ApplyContext`. It may be left
    /// out when the actions read none and the workflow can be made without arguments: a workflow
    /// conforming to ``DefaultInitializableWorkflow``, or one without stored properties (the usual
    /// case in workflow-swift's tutorials). For any other workflow the actions are still applied,
    /// as workflow-swift's tester applies them: only an action that reads a prop fails ("Attempted
    /// to read value …"); an optional prop then reads as `nil`, any other stops the test process
    /// (there is no value to give it).
    public static func tester(
        withState state: WorkflowType.State,
        workflow: WorkflowType? = nil
    ) -> WorkflowActionTester<WorkflowType, Self> {
        WorkflowActionTester(workflow: workflow ?? defaultWorkflow(WorkflowType.self), state: state)
    }
}

/// A workflow value made without arguments, if the type allows it: `init()` of a
/// ``DefaultInitializableWorkflow``, or the only value of a type without stored properties.
func defaultWorkflow<W: Workflow>(_ type: W.Type) -> W? {
    if let initializable = type as? any DefaultInitializableWorkflow.Type {
        return initializable.init() as? W
    }
    return propertylessValue(of: type)
}

/// The value of a workflow type without stored properties: it has no bits, so it is the same
/// value however it is made. `nil` for any type that has storage (its props must be passed).
/// (A caseless enum also has no bits but no value either; nobody tests the actions of a workflow
/// that cannot exist.)
private func propertylessValue<W>(of type: W.Type) -> W? {
    guard MemoryLayout<W>.size == 0 else { return nil }
    return unsafeBitCast((), to: W.self)
}
