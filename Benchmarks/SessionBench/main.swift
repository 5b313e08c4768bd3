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
//     SESSION_BENCH_ROLE=load session-bench create URL COUNT IDS_FILE [TOTAL]
//                                               creates COUNT sessions of "board" on URL, waits
//                                               until each shows its remote child, appends them
//                                               to IDS_FILE (`ID URL` lines); the creation rate per
//                                               tenth of the TOTAL the run creates; over
//                                               SESSION_BENCH_CREATORS connections (default 48)
//     SESSION_BENCH_ROLE=load session-bench events IDS_FILE SESSIONS RATE SECONDS [ACCEPTED_FILE]
//                                               RATE events/s spread over the first SESSIONS
//                                               sessions of IDS_FILE, each on its own gateway and
//                                               watched by a WebSocket client: prints the POST →
//                                               rendering latencies as one JSON line, writes each
//                                               session's answers to ACCEPTED_FILE
//     SESSION_BENCH_ROLE=load session-bench shared URL RATE SECONDS
//                                               the same, all to the shared root of URL
//     SESSION_BENCH_ROLE=load session-bench takeover PID DEAD_URL IDS_FILE ACCEPTED_FILE
//                                               SIGKILLs coordinator PID, times until the others
//                                               served each of its sessions again, checks every
//                                               answered event applied once

// A synchronous main whose work runs in a task while the main thread waits on a semaphore: with
// an `async` main, libdispatch parks the main thread in `sigsuspend` and valgrind 3.19 crashes
// there (Benchmarks/callgrind-session.sh runs the daemons under callgrind).
let done = DispatchSemaphore(value: 0)
Task.detached {
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
    done.signal()
}
done.wait()
