import Foundation
import RemoteTestSupport
import WorkflowCluster
import WorkflowClusterCommands
import WorkflowClusterTesting
import WorkflowRemote

// `session-bench`: the daemons and the load of scripts/bench-sessions.sh, in one binary.
//
//     session-bench --config FILE …             the coordinator (the library's command line), hosting
//                                               the root "board": one counter, a remote child placed
//                                               by the configuration
//     SESSION_BENCH_ROLE=worker session-bench --config FILE --name W    a worker hosting the counter
//     SESSION_BENCH_ROLE=load session-bench create URL COUNT IDS_FILE   creates COUNT sessions of
//                                               "board", waits until each shows its remote child,
//                                               writes their ids
//     SESSION_BENCH_ROLE=load session-bench events URL IDS_FILE SESSIONS RATE SECONDS [shared]
//                                               RATE events/s spread over SESSIONS sessions (or all
//                                               to the shared root), each session watched by a
//                                               WebSocket client: prints the POST → rendering
//                                               latencies as one JSON line

switch ProcessInfo.processInfo.environment["SESSION_BENCH_ROLE"] {
case "worker":
    ParentWatch.exitWhenOrphaned()
    await WorkflowWorkerCommand.main(hosting: RemotableRegistry().registering(CounterWorkflow.self))
case "load":
    do {
        try await SessionLoad.run(Array(CommandLine.arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("session-bench load: \(error)\n".utf8))
        exit(1)
    }
default:
    ParentWatch.exitWhenOrphaned()
    await WorkflowCoordinatorCommand.main(
        roots: RootWorkflowRegistry().registering("board") {
            CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured)
        })
}
