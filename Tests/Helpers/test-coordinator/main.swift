// The cluster tests' coordinator: the library's coordinator command hosting the test root
// `list-detail` (a list pane and a detail pane placed by the configuration), with a scripted
// sequence of picks (`--picks 3,1`) that drives events through the whole tree; and the root
// `ledger-board` (six remote ledgers) of the rolling-upgrade test.
import RemoteTestSupport
import WorkflowCluster
import WorkflowClusterCommands
import WorkflowClusterTesting

// Dies with the test process, even one that crashed before its cleanup.
ParentWatch.exitWhenOrphaned()
await WorkflowCoordinatorCommand.main(
    roots: RootWorkflowRegistry().registering("list-detail") { ListDetailWorkflow() }.registering("ledger-board") { LedgerBoardWorkflow(count: 6) },
    extension: PickScriptOptions.self)
