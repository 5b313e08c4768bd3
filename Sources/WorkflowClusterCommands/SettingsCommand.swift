import ArgumentParser
import WorkflowCluster

/// `COORDINATOR settings`: prints every setting of the daemons (key, flag, environment variable,
/// default, meaning) as the Markdown table docs/OPERATIONS.md holds, from the declarations.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Prints every setting: its key, flag, environment variable, default and meaning (docs/OPERATIONS.md's table).")

    func run() {
        print(ClusterSettingsReference.markdownTable())
    }
}
