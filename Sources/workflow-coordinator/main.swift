// The email browser's coordinator: the library's coordinator with the email browser's root and
// its scripted demo flags.
import EmailBrowserCluster
import WorkflowClusterCommands

await WorkflowCoordinatorCommand.main(roots: EmailBrowserCluster.roots, extension: EmailBrowserDemoOptions.self)
