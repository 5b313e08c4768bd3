import Foundation
import Synchronization

/// `workflow-bench`: prints one table of every figure, each beside its baseline from the same run.
///
///     swift run -c release workflow-bench            (or scripts/bench.sh)
///     swift run -c release workflow-bench local      figures 1–2 only (the in-process runtime)
///     swift run -c release workflow-bench remote     figures 3–5 only (round trip, events, fan-out)
///     swift run -c release workflow-bench remote 4   one of them alone (3, 4 or 5), for profiling
///
///     workflow-bench profile-remote COUNT [ENDPOINT] COUNT remote round trips alone, for callgrind
///                                                    (Benchmarks/callgrind-remote.sh)
///     workflow-bench profile-events COUNT [ENDPOINT] COUNT events of figure 4 alone, for callgrind
///                                                    (Benchmarks/callgrind-remote.sh … events)
///     workflow-bench profile-fanout COUNT [ENDPOINT] [CHILDREN]  COUNT props changes of figure 5
///                                                    (CHILDREN remote children, default 1,000)
///                                                    (Benchmarks/callgrind-remote.sh … fanout)
///     workflow-bench profile-fanstart COUNT [ENDPOINT] [CHILDREN]  COUNT boards of CHILDREN new
///                                                    remote children in place of the last
///                                                    (Benchmarks/callgrind-remote.sh … fanstart)
///
/// Internal modes (the benchmark spawns itself): `worker ENDPOINT NAME`, `raw-echo ENDPOINT`.
///
/// A synchronous `main` that runs the figures in a task and waits on a semaphore: with an
/// `async` main, libdispatch parks the main thread in `sigsuspend` and valgrind 3.19 crashes
/// there, so neither the benchmark nor its worker processes could run under callgrind.
@main
struct WorkflowBench {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "worker": try runWorker(endpoint: arguments[1], name: arguments[2])
        case "raw-echo": try runRawEcho(endpoint: arguments[1])
        default: break
        }
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        Task.detached {
            do {
                let count = arguments.count > 1 ? Int(arguments[1]) : nil
                let endpoint = arguments.count > 2 && !arguments[2].isEmpty ? arguments[2] : nil
                if arguments.first == "profile-remote" {
                    try await remoteRoundTripProfile(count: count ?? 100, endpoint: endpoint)
                } else if arguments.first == "profile-events" {
                    try await remoteEventsProfile(count: count ?? 10_000, endpoint: endpoint)
                } else if arguments.first == "profile-fanout" {
                    let children = arguments.count > 3 ? Int(arguments[3]) : nil
                    try await remoteFanOutProfile(count: count ?? 20, endpoint: endpoint, children: children ?? 1_000)
                } else if arguments.first == "profile-fanstart" {
                    let children = arguments.count > 3 ? Int(arguments[3]) : nil
                    try await remoteFanStartProfile(count: count ?? 4, endpoint: endpoint, children: children ?? 1_000)
                } else {
                    try await runFigures(arguments)
                }
            } catch {
                failure.withLock { $0 = error }
            }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private static func runFigures(_ arguments: [String]) async throws {
        var figures: [Figure] = []
        if arguments.first == "remote" {
            // Figures 3–5 only (the remote paths), e.g. three times in a row for before/after.
            // `remote 3`, `remote 4`, `remote 5`: that figure alone (for profiling it).
            let only = arguments.count > 1 ? arguments[1] : nil
            let bench = try await RemoteBench()
            switch only {
            case "4": figures += try await throughputFigures(bench)
            case "5": figures += try await fanOutFigures(bench, rawRoundTrip: try rawRoundTrip())
            default:
                let roundTrip = try await roundTripFigures(bench)
                figures += roundTrip
                if only != "3" {
                    figures += try await throughputFigures(bench)
                    figures += try await fanOutFigures(bench, rawRoundTrip: roundTrip[0].baseline ?? 0)
                }
            }
            await bench.stop()
            printTable(figures)
            return
        }
        figures += await localRenderFigures()
        figures.append(await cascadeFigure())
        for (options, label) in tapModes {
            figures.append(await tapLatencyFigure(options: options, label: label, goal: 15_000))
        }
        figures += await allocationFigures()
        if arguments.first == "local" {
            printTable(figures)
            return
        }
        let bench = try await RemoteBench()
        let roundTrip = try await roundTripFigures(bench)
        figures += roundTrip
        figures += try await throughputFigures(bench)
        figures += try await fanOutFigures(bench, rawRoundTrip: roundTrip[0].baseline ?? 0)
        figures += try codecFigures()
        figures += try await memoryFigures(bench)
        await bench.stop()
        figures.append(try await failureDetectionFigure(signal: SIGKILL, label: "SIGKILL"))
        figures.append(try await failureDetectionFigure(signal: SIGSTOP, label: "SIGSTOP (hung)"))
        printTable(figures)
    }
}
