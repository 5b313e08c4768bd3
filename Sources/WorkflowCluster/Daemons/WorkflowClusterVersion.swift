/// The version of the cluster library and its daemons, in one place.
///
/// `--version` on every daemon built with `WorkflowCoordinatorCommand` or `WorkflowWorkerCommand`
/// prints it, and the CHANGELOG names releases by it, so an operator can tell which build runs.
package enum WorkflowClusterVersion {
    /// The current version (semantic versioning).
    package static let current = "0.3.0"
}
