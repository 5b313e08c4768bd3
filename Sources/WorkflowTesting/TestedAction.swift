import Workflow

/// An action the tester applies after a render pass, with where it came from.
///
/// Kept type-erased (that is what gets applied); the concrete action comes back through
/// `AnyWorkflowAction.base`, so results can compare or inspect it whether it was sent to a sink,
/// given to `expectSideEffect`, or made by a parent's output map.
struct TestedAction<WorkflowType: Workflow> {
    /// What gets applied.
    let erased: AnyWorkflowAction<WorkflowType>
    /// A human-readable origin ("sink of Int", "output of child of type InboxWorkflow with key
    /// \"inbox\""), for failure messages.
    let origin: String

    init<A: WorkflowAction>(_ action: A, origin: String) where A.WorkflowType == WorkflowType {
        erased = AnyWorkflowAction(action)
        self.origin = origin
    }

    /// The applied action as an `A`: the erased action itself when `A` is `AnyWorkflowAction`,
    /// otherwise the action it wraps, if of type `A`.
    func action<A: WorkflowAction>(as type: A.Type) -> A? where A.WorkflowType == WorkflowType {
        (erased as? A) ?? (erased.base as? A)
    }

    /// The concrete action as it prints (`noop(10)`), for messages; an action written inline
    /// prints as its type.
    var actionDescription: String {
        erased.isClosureBased ? actionTypeName : "\(erased.base)"
    }

    /// The concrete action's type, for messages.
    var actionTypeName: String {
        String(reflecting: erased.actionType)
    }
}
