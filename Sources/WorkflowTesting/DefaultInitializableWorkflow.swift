import Workflow

/// A workflow whose props have a default value, so testers can make one themselves.
///
/// Swift cannot constrain on "has an `init()`", so workflows opt in by conforming (an empty
/// extension suffices when they already have one). Then `Action.tester(withState:)` needs no
/// workflow argument.
public protocol DefaultInitializableWorkflow: Workflow {
    /// Creates the workflow with its default props.
    init()
}
