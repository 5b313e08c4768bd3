// The email browser's worker: the library's worker hosting the browser's panes.
import EmailBrowserCluster
import WorkflowClusterCommands

await WorkflowWorkerCommand.main(hosting: EmailBrowserCluster.workerTypes)
