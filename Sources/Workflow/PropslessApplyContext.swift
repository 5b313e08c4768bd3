/// An apply context with no workflow behind it, for an action tester that was given none and
/// cannot make one (a workflow with stored properties).
///
/// workflow-swift's tester applies such actions and fails only when one reads a prop, so tests
/// of actions that never read props need no workflow value; this context gives the same. A read
/// of an optional prop is reported and reads as `nil`; any other read cannot produce a value and
/// stops the process with the tester's words (as workflow-swift's does).
final class PropslessApplyContext<WorkflowType: Workflow>: ApplyContext<WorkflowType> {
    /// Words for a read of `keyPath`, reported by the tester; `readsAsNil` says the read goes on.
    private let missingValue: (_ keyPath: AnyKeyPath, _ readsAsNil: Bool) -> String

    init(missingValue: @escaping (_ keyPath: AnyKeyPath, _ readsAsNil: Bool) -> String) {
        self.missingValue = missingValue
        super.init()
    }

    override func value<Value>(at keyPath: KeyPath<WorkflowType, Value>) -> Value {
        if let optional = Value.self as? any NilReadable.Type, let none = optional.none as? Value {
            _ = missingValue(keyPath, true)
            return none
        }
        preconditionFailure(missingValue(keyPath, false))
    }
}

/// A type with a value that stands for "absent": lets the props-less context answer `nil` for an
/// optional prop without knowing the wrapped type.
private protocol NilReadable {
    /// The absent value.
    static var none: Self { get }
}

extension Optional: NilReadable {}
