import Workflow

/// A side effect the workflow under test is expected to declare.
///
/// The tester never runs side-effect closures (they start real work); it only checks that the
/// key was declared and, optionally, applies an action as if the side effect had sent it.
struct ExpectedSideEffect<WorkflowType: Workflow> {
    /// The side effect's key.
    let key: AnyHashable
    /// The action to apply as if the side effect sent it, if any.
    let action: TestedAction<WorkflowType>?
    /// Where the expectation was declared, for the "not declared" failure.
    let location: FailureLocation
}
