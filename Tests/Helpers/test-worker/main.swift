// The cluster tests' worker: the library's worker command hosting every test workflow. With
// TEST_WORKER_BUILD=next it plays the next build of the worker in a rolling upgrade: it speaks
// the next remote protocol version too (so the parent negotiates the highest both speak), and
// hosts the ledger in its next state version (`LedgerWorkflowNext`).
import Foundation
import RemoteTestSupport
import WorkflowClusterCommands
import WorkflowClusterTesting
import WorkflowRemote

// Dies with the test process, even one that crashed before its cleanup.
ParentWatch.exitWhenOrphaned()
if ProcessInfo.processInfo.environment["TEST_WORKER_BUILD"] == "next" {
    let speaks = RemoteProtocol.supported
    await WorkflowWorkerCommand.main(hosting: nextBuildTestRegistry, protocolVersions: speaks.lowerBound...(speaks.upperBound + 1))
} else {
    await WorkflowWorkerCommand.main(hosting: remoteTestRegistry)
}
