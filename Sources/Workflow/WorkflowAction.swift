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
    /// The wrapped action: the concrete one, or a `ClosureAction` for the closure forms. An
    /// existential rather than a closure capturing the action: small actions (most are enums)
    /// fit its inline buffer, so erasing one allocates nothing, and `base` can hand it back.
    @usableFromInline let wrapped: any WorkflowAction<WorkflowType>

    /// The concrete action type this wraps (the closure forms report `AnyWorkflowAction`), for
    /// observers and test failures. Worked out when asked rather than stored: storing it would
    /// look up this generic type's metadata for every action built in code that is not
    /// specialised for the user's types (the runtime's), hundreds of instructions each time.
    public var actionType: Any.Type {
        wrapped is any ClosureForm ? AnyWorkflowAction.self : type(of: wrapped)
    }

    /// Wraps a concrete action.
    public init<A: WorkflowAction>(_ action: A) where A.WorkflowType == WorkflowType {
        // An action that is already erased is taken as it is. A comparison of types, not
        // `as?`: this code is not specialised for the user's types, and a dynamic cast per
        // action (every event and every output mapped by a parent) is a costly search.
        if A.self == AnyWorkflowAction<WorkflowType>.self {
            self = reinterpret(action, as: AnyWorkflowAction<WorkflowType>.self)
            return
        }
        wrapped = action
    }

    /// An action written inline.
    ///
    /// Inlined into the caller, which knows the workflow type, so the closure's action type
    /// and its conformance are found once per call site rather than looked up per action.
    @inlinable
    public init(_ apply: @escaping (inout WorkflowType.State, ApplyContext<WorkflowType>) -> WorkflowType.Output?) {
        wrapped = ClosureAction(apply: apply)
    }

    /// An action written inline that does not read the workflow's props: workflow-swift's
    /// `AnyWorkflowAction { state in … }`.
    @inlinable
    public init(_ apply: @escaping (inout WorkflowType.State) -> WorkflowType.Output?) {
        self.init { state, _ in apply(&state) }
    }

    /// An action that leaves state alone and reports `output`.
    @inlinable
    public init(sendingOutput output: WorkflowType.Output) {
        wrapped = OutputAction(output: output)
    }

    /// An action that does nothing: no state change, no output.
    @inlinable
    public static var noAction: AnyWorkflowAction<WorkflowType> {
        AnyWorkflowAction { _, _ in nil }
    }

    /// The wrapped action, for tests and diagnostics: the concrete action value for an erased
    /// one (`base as? MyAction`), an opaque value for the closure forms.
    public var base: Any { wrapped }

    /// Whether this action was written as a closure (`AnyWorkflowAction { state in … }`, or one
    /// of `sendingOutput:` and `noAction`) rather than erased from a concrete action type.
    public var isClosureBased: Bool { wrapped is any ClosureForm }

    /// Applies the wrapped action (or runs the closure).
    public func apply(toState state: inout WorkflowType.State, context: ApplyContext<WorkflowType>) -> WorkflowType.Output? {
        wrapped.apply(toState: &state, context: context)
    }
}

/// An action type that stands for one of `AnyWorkflowAction`'s closure forms, so `actionType`
/// reports `AnyWorkflowAction` for it.
@usableFromInline
protocol ClosureForm {}

/// The action of `AnyWorkflowAction`'s closure forms.
@usableFromInline
struct ClosureAction<WorkflowType: Workflow>: WorkflowAction, ClosureForm {
    @usableFromInline let apply: (inout WorkflowType.State, ApplyContext<WorkflowType>) -> WorkflowType.Output?

    @inlinable
    init(apply: @escaping (inout WorkflowType.State, ApplyContext<WorkflowType>) -> WorkflowType.Output?) {
        self.apply = apply
    }

    @inlinable
    func apply(toState state: inout WorkflowType.State, context: ApplyContext<WorkflowType>) -> WorkflowType.Output? {
        apply(&state, context)
    }
}

/// The action of `AnyWorkflowAction(sendingOutput:)`: no closure to allocate per output.
@usableFromInline
struct OutputAction<WorkflowType: Workflow>: WorkflowAction, ClosureForm {
    @usableFromInline let output: WorkflowType.Output

    @inlinable
    init(output: WorkflowType.Output) {
        self.output = output
    }

    @inlinable
    func apply(toState state: inout WorkflowType.State, context: ApplyContext<WorkflowType>) -> WorkflowType.Output? {
        output
    }
}
