import Dispatch

/// `wf-profile NAME COUNT`: runs one local operation of `workflow-bench` COUNT times, for
/// `valgrind --tool=callgrind` (built and run by `Benchmarks/callgrind-local.sh`, not by SwiftPM).
///
/// A synchronous `main` that waits on a semaphore: with an `async` main, libdispatch parks the
/// main thread in `sigsuspend`, and valgrind 3.19 crashes there.
@main struct ProfileMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2, let count = Int(arguments[1]) else {
            print("usage: wf-profile first-wide|first-chain|rerender-wide|rerender-chain|tap COUNT")
            return
        }
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await runProfile(arguments[0], count: count)
            done.signal()
        }
        done.wait()
    }
}
