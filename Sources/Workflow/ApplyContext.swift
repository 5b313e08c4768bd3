/// What an action may read while it is applied: the workflow's current props.
///
/// Actions created in an earlier render pass may be applied after the parent re-rendered with
/// new props; reading props through the context (not through a captured workflow value) always
/// gives the current ones. The context is only valid during `apply`.
public final class ApplyContext<WorkflowType: Workflow> {
    private var workflow: WorkflowType?

    init(workflow: WorkflowType) {
        self.workflow = workflow
    }

    /// Reads a property of the current workflow value (its props).
    public subscript<Value>(workflowValue keyPath: KeyPath<WorkflowType, Value>) -> Value {
        guard let workflow else {
            preconditionFailure(
                "ApplyContext<\(WorkflowType.self)> used after its action's apply(toState:context:) returned")
        }
        return workflow[keyPath: keyPath]
    }

    /// Builds a context for applying actions outside a runtime (tests, tools).
    public static func make(for workflow: WorkflowType) -> ApplyContext<WorkflowType> {
        ApplyContext(workflow: workflow)
    }

    /// Ends the context's validity.
    public func invalidate() {
        workflow = nil
    }
}
