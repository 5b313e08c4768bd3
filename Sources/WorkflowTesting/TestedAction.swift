import Workflow

/// An action the tester applies after a render pass, with where it came from.
///
/// The concrete action is kept when it is known (sinks, side effects) so results can compare it
/// with `assert(action:)`; actions produced by a parent's output map reach the tester already
/// type-erased, so for those only the erased form and its `actionType` exist.
struct TestedAction<WorkflowType: Workflow> {
    /// What gets applied.
    let erased: AnyWorkflowAction<WorkflowType>
    /// The concrete action value, if the tester saw it before erasure.
    let concrete: Any?
    /// A human-readable origin ("sink of Int", "output of child InboxWorkflow (key \"inbox\")"),
    /// for failure messages.
    let origin: String

    /// An action whose concrete value is known.
    init<A: WorkflowAction>(_ action: A, origin: String) where A.WorkflowType == WorkflowType {
        erased = AnyWorkflowAction(action)
        concrete = action
        self.origin = origin
    }

    /// An action that only exists erased (produced by an output map).
    init(erased: AnyWorkflowAction<WorkflowType>, origin: String) {
        self.erased = erased
        concrete = nil
        self.origin = origin
    }

    /// The concrete action's type, for messages.
    var actionTypeName: String {
        concrete.map { String(reflecting: type(of: $0)) } ?? String(reflecting: erased.actionType)
    }
}
