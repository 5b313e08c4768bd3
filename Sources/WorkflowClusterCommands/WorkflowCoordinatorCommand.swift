import ArgumentParser
import WorkflowCluster

/// The coordinator daemon as a library: a user's `@main` calls `main(roots:)` with the roots it
/// can host and gets everything the shipped `workflow-coordinator` has.
///
/// That is: `serve` (the default: flags, `WORKFLOW_*` environment, the configuration file,
/// CURVE keys, logging, signals, snapshots and `--restore`, the placement table, printed
/// renderings, `--events-from-stdin`, the HTTP gateway), `keygen` and `--version`.
///
/// ```swift
/// @main
/// enum OrdersCoordinator {
///     static func main() async {
///         await WorkflowCoordinatorCommand.main(roots: RootWorkflowRegistry().registering("orders") { OrderBoardWorkflow() })
///     }
/// }
/// ```
public enum WorkflowCoordinatorCommand {
    /// Parses the command line, runs the command it names and returns on success; exits the
    /// process with the documented code otherwise (78: invalid configuration, key or snapshot
    /// file; 1: a runtime failure; 64: a usage error).
    public static func main(roots: RootWorkflowRegistry) async {
        await main(roots: roots, extension: NoCoordinatorExtension.self)
    }

    /// Like `main(roots:)`, with static pages the gateway serves (`gateway.listen`): an
    /// application's web client, e.g. the email browser's page at `/`.
    public static func main(roots: RootWorkflowRegistry, webAssets: [WebAsset]) async {
        await main(roots: roots, extension: NoCoordinatorExtension.self, webAssets: webAssets)
    }

    /// Like `main(roots:)`, with the application's own flags added to `serve` (see
    /// `CoordinatorCommandExtension`).
    public static func main<Extension: CoordinatorCommandExtension>(
        roots: RootWorkflowRegistry, extension: Extension.Type, webAssets: [WebAsset] = []
    ) async {
        await main(roots: roots, extension: Extension.self, webAssets: webAssets, storeSchema: .thisRelease)
    }

    /// `main(roots:)` reading and writing the store in `storeSchema`'s layout instead of this
    /// release's: the test coordinator that plays the next release in the coordinators'
    /// rolling-upgrade tests (as the test worker plays the next build with its protocol versions).
    package static func main(roots: RootWorkflowRegistry, storeSchema: StoreSchema) async {
        await main(roots: roots, extension: NoCoordinatorExtension.self, storeSchema: storeSchema)
    }

    private static func main<Extension: CoordinatorCommandExtension>(
        roots: RootWorkflowRegistry, extension: Extension.Type, webAssets: [WebAsset] = [], storeSchema: StoreSchema
    ) async {
        do {
            var command = try CoordinatorCommand<Extension>.parseAsRoot()
            if let serve = command as? ServeCommand<Extension> {
                try await serve.run(roots: roots, webAssets: webAssets, storeSchema: storeSchema)
            } else {
                try command.run()
            }
        } catch {
            CoordinatorCommand<Extension>.exit(withError: error)
        }
    }
}

/// `COORDINATOR [serve]` and `COORDINATOR keygen`.
struct CoordinatorCommand<Extension: CoordinatorCommandExtension>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: ExecutableName.current(or: "workflow-coordinator"),
            abstract: "Hosts a root workflow whose children run on worker processes.",
            version: WorkflowClusterVersion.current,
            subcommands: [ServeCommand<Extension>.self, KeygenCommand.self, SettingsCommand.self],
            defaultSubcommand: ServeCommand<Extension>.self)
    }
}
