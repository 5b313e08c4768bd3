import ArgumentParser
import WorkflowCluster
import WorkflowRemote

/// The worker daemon as a library: a user's `@main` calls `main(hosting:)` with the remotable
/// workflow types its workers host and gets everything the shipped `workflow-worker` has (flags,
/// `WORKFLOW_*` environment, the configuration file, CURVE keys, logging, signals, `--version`).
///
/// ```swift
/// @main
/// enum OrdersWorker {
///     static func main() async {
///         await WorkflowWorkerCommand.main(hosting: RemotableRegistry().registering(PackingWorkflow.self))
///     }
/// }
/// ```
public enum WorkflowWorkerCommand {
    /// Parses the command line and runs the worker until a signal; exits the process with the
    /// documented code on failure (78: invalid configuration or key file; 64: no worker name;
    /// 1: a runtime failure).
    public static func main(hosting registry: RemotableRegistry) async {
        await main(hosting: registry, protocolVersions: RemoteProtocol.supported)
    }

    /// `main(hosting:)` offering `protocolVersions` in HELLO instead of this build's: the test
    /// daemons play a worker of a later build, which speaks a newer protocol too, in a rolling
    /// upgrade.
    package static func main(hosting registry: RemotableRegistry, protocolVersions: ClosedRange<Int>) async {
        do {
            let command = try WorkerCommand.parseAsRoot()
            guard let worker = command as? WorkerCommand else {
                var other = command
                try other.run()
                return
            }
            try await worker.run(hosting: registry, protocolVersions: protocolVersions)
        } catch {
            WorkerCommand.exit(withError: error)
        }
    }
}
