// The cluster tests' worker: the library's worker command hosting every test workflow.
import RemoteTestSupport
import WorkflowClusterCommands

await WorkflowWorkerCommand.main(hosting: remoteTestRegistry)
