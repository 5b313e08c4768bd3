// The cluster tests' worker: the library's worker command hosting every test workflow.
import RemoteTestSupport
import WorkflowClusterCommands
import WorkflowClusterTesting

// Dies with the test process, even one that crashed before its cleanup.
ParentWatch.exitWhenOrphaned()
await WorkflowWorkerCommand.main(hosting: remoteTestRegistry)
