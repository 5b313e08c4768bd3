import Workflow

/// A workflow whose props have a default value, so testers can make one themselves.
///
/// Swift cannot constrain on "has an `init()`", so workflows opt in by conforming (an empty
/// extension suffices when they already have one). Then `Action.tester(withState:)` needs no
/// workflow argument even for actions that read props (they read the default ones); without it,
/// only actions that read no props can be tested without one.
public protocol DefaultInitializableWorkflow: Workflow {
    /// Creates the workflow with its default props.
    init()
}
