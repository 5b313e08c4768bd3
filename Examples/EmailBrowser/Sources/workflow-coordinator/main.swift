// The email browser's coordinator: the library's coordinator with the email browser's root, its
// scripted demo flags and its web page (served by the gateway at `/` when `gateway.listen` is set).
import EmailBrowserCluster
import WorkflowClusterCommands

await WorkflowCoordinatorCommand.main(
    roots: EmailBrowserCluster.roots, extension: EmailBrowserDemoOptions.self, webAssets: EmailBrowserWebPage.assets)
