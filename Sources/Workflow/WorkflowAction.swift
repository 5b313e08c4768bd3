/// A change to a workflow's state, possibly reporting an output to its parent.
///
/// Actions are the only way state changes. The runtime applies them one at a time, never during
/// a render, so `apply` sees a consistent state and the next render reflects it.
public protocol WorkflowAction<WorkflowType> {
    /// The workflow whose state this action changes.
    associatedtype WorkflowType: Workflow

    /// Applies the change. `context` reads the workflow's current props and is invalid afterwards.
    func apply(toState state: inout WorkflowType.State, context: ApplyContext<WorkflowType>) -> WorkflowType.Output?
}

/// A type-erased action, or an action written as a closure.
public struct AnyWorkflowAction<WorkflowType: Workflow>: WorkflowAction {
    private let applyClosure: (inout WorkflowType.State, ApplyContext<WorkflowType>) -> WorkflowType.Output?

    /// The concrete action type this wraps (the closure form reports itself), for observers.
    public let actionType: Any.Type

    /// Wraps a concrete action.
    public init<A: WorkflowAction>(_ action: A) where A.WorkflowType == WorkflowType {
        // An action that is already erased is taken as it is. A comparison of types, not
        // `as?`: this code is not specialised for the user's types, and a dynamic cast per
        // action (every event and every output mapped by a parent) is a costly search.
        if A.self == AnyWorkflowAction<WorkflowType>.self {
            self = reinterpret(action, as: AnyWorkflowAction<WorkflowType>.self)
            return
        }
        applyClosure = { state, context in action.apply(toState: &state, context: context) }
        actionType = A.self
    }

    /// An action written inline.
    public init(_ apply: @escaping (inout WorkflowType.State, ApplyContext<WorkflowType>) -> WorkflowType.Output?) {
        applyClosure = apply
        actionType = AnyWorkflowAction.self
    }

    /// An action that leaves state alone and reports `output`.
    public init(sendingOutput output: WorkflowType.Output) {
        applyClosure = { _, _ in output }
        actionType = AnyWorkflowAction.self
    }

    /// An action that does nothing: no state change, no output.
    public static var noAction: AnyWorkflowAction<WorkflowType> {
        AnyWorkflowAction { _, _ in nil }
    }

    public func apply(toState state: inout WorkflowType.State, context: ApplyContext<WorkflowType>) -> WorkflowType.Output? {
        applyClosure(&state, context)
    }
}
