/// What an action may read while it is applied: the workflow's current props.
///
/// Actions created in an earlier render pass may be applied after the parent re-rendered with
/// new props; reading props through the context (not through a captured workflow value) always
/// gives the current ones. The context is only valid during `apply`.
///
/// Not `final` so that the props can live in a subclass: the runtime's contexts always hold a
/// workflow (`RuntimeApplyContext`), while an action tester given no workflow still needs a
/// context that applies actions and fails only when one reads a prop (`PropslessApplyContext`),
/// as workflow-swift's tester does. Holding the props as `WorkflowType?` instead would cost the
/// runtime a generic metadata lookup on every applied action (its code is not specialised per
/// workflow). Nothing outside this module can subclass it (no public initialiser).
public class ApplyContext<WorkflowType: Workflow> {
    // A validity flag rather than an optional, for the same reason as above. An invalidated
    // context therefore still holds its props until it is renewed or released.
    private(set) var isValid = true
    /// Outputs reported with `emitOutput(_:)`, in order, before the one `apply` returns.
    private(set) var emittedOutputs: [WorkflowType.Output] = []
    /// Whether `emittedOutputs` holds any: checked before the array is touched (see above).
    private(set) var hasEmittedOutputs = false

    init() {}

    /// Reads a property of the current workflow value (its props).
    public subscript<Value>(workflowValue keyPath: KeyPath<WorkflowType, Value>) -> Value {
        guard isValid else {
            preconditionFailure(
                "ApplyContext<\(WorkflowType.self)> used after its action's apply(toState:context:) returned")
        }
        return value(at: keyPath)
    }

    /// The value at `keyPath` of the props this context holds; every subclass provides it.
    func value<Value>(at keyPath: KeyPath<WorkflowType, Value>) -> Value {
        preconditionFailure("ApplyContext<\(WorkflowType.self)> has no props")
    }

    /// Builds a context for applying actions outside a runtime (tests, tools).
    public static func make(for workflow: WorkflowType) -> ApplyContext<WorkflowType> {
        RuntimeApplyContext(workflow: workflow)
    }

    /// Builds a context that holds no props, for an action tester given no workflow: actions
    /// that read none apply normally; a read asks `missingValue` for the failure's words (and
    /// whether the value's type lets the read go on: an optional reads as `nil`). A read of any
    /// other type stops the test process with those words, there being no value to return.
    package static func withoutProps(
        missingValue: @escaping (_ keyPath: AnyKeyPath, _ readsAsNil: Bool) -> String
    ) -> ApplyContext<WorkflowType> {
        PropslessApplyContext(missingValue: missingValue)
    }

    /// Reports `output` in addition to the one `apply` returns; for runtimes only.
    ///
    /// An action of a runtime's own workflow may stand for several outputs of a child at once:
    /// a remote child's worker reports every output of a batch of events together with the
    /// rendering after them, and the parent must apply them all, each with its own output
    /// cascade, before one render pass shows that rendering (otherwise a pass in between shows
    /// the child's new rendering next to a parent state that has not seen its outputs yet).
    /// Emitted outputs cascade in the order emitted, before the returned output.
    package func emitOutput(_ output: WorkflowType.Output) {
        precondition(isValid, "ApplyContext<\(WorkflowType.self)>.emitOutput used after apply returned")
        emittedOutputs.append(output)
        hasEmittedOutputs = true
    }

    /// Says that this action changed nothing a render pass would show; for runtimes only.
    ///
    /// A runtime's own workflow asks its node to render again with an action (a remote child's
    /// "refresh" after a failure, a new status, a worker that joined). Several such requests can
    /// queue up before the first is applied, and the pass the first one causes answers them all;
    /// the later ones then call this, and the host does not render for them. Without it, a
    /// worker lost with N children cost N render passes of the whole tree.
    package func rendersNothing() {
        precondition(isValid, "ApplyContext<\(WorkflowType.self)>.rendersNothing used after apply returned")
        skipsRender = true
    }

    /// Set by `rendersNothing()`.
    private(set) var skipsRender = false

    /// Ends the context's validity.
    public func invalidate() {
        isValid = false
    }

    /// Makes an invalidated context valid for another action (the runtime reuses a context only
    /// when nothing but itself refers to it); the subclass that holds props renews them.
    func renewValidity() {
        isValid = true
        skipsRender = false
        if hasEmittedOutputs {
            emittedOutputs.removeAll(keepingCapacity: true)
            hasEmittedOutputs = false
        }
    }
}
