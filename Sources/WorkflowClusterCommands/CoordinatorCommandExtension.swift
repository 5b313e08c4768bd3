import ArgumentParser
import WorkflowCluster

/// Flags an application adds to its coordinator's `serve` command, and what they change.
///
/// The shipped daemons are instances of the library's entry points; an application that needs
/// more than the standard flags (the email browser's `--demo-selections`) declares them here,
/// with ArgumentParser's property wrappers, instead of copying the coordinator's command.
public protocol CoordinatorCommandExtension: ParsableArguments, Sendable {
    /// Applies the parsed flags to the coordinator's options, e.g. by adding a companion or
    /// changing the print mode. Runs after the standard flags are applied.
    func configure(_ options: inout CoordinatorOptions)
}

/// The extension of a coordinator that adds no flags.
struct NoCoordinatorExtension: CoordinatorCommandExtension {
    func configure(_ options: inout CoordinatorOptions) {}
}
