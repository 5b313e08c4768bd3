import Logging

/// What the parent's and the worker's drivers (`ParentDriver`, `WorkerDriver`) share as drivers
/// on the loop thread: reading a socket in bounded slices, and warnings caused by peers, rate
/// limited per role.
protocol LoopRoleDriver: AnyObject {
    var configuration: RemoteRuntimeConfiguration { get }
    var logger: Logger { get }
    /// Bounds the warnings peers' traffic causes (and the ERROR replies that go with them).
    var peerWarnings: LogRateLimiter { get set }
}

extension LoopRoleDriver {
    /// Receives and handles messages until none is waiting, 10,000 were handled, or half a
    /// heartbeat interval has passed: between slices the loop runs its jobs and timers (the
    /// heartbeats), and what is left is read on the next iteration.
    func handleSlice<Message>(of receive: () -> Message?, _ handle: (Message) -> Void) {
        let deadline = ContinuousClock.now + configuration.heartbeatInterval / 2
        var budget = 10_000
        while budget > 0, let message = receive() {
            budget -= 1
            handle(message)
            if ContinuousClock.now >= deadline { break }
        }
    }

    /// Logs a warning caused by a peer's traffic unless its kind is over its rate
    /// (`LogRateLimiter`), and returns whether it was logged. Callers answer the peer with ERROR
    /// only when it was: a peer flooding bad messages then costs neither log volume nor a queue
    /// of replies it never reads, and the warnings past the rate are still counted. `kind` is
    /// fixed text (it keys the limiter); anything the peer sent belongs in `detail`.
    @discardableResult
    func warnLimited(_ kind: String, detail: String? = nil, metadata: Logger.Metadata = [:], level: Logger.Level = .warning) -> Bool {
        guard peerWarnings.admit(kind) else { return false }
        logger.log(level: level, "\(kind)\(detail.map { ": \($0)" } ?? "")", metadata: metadata)
        return true
    }

    /// One line per kind of warning whose window ended with warnings suppressed: how many.
    func reportSuppressedWarnings() {
        for (kind, count) in peerWarnings.endedWindows() {
            logger.warning(
                "\(count) more warnings suppressed (at most \(peerWarnings.burst) per \(peerWarnings.window)): \(kind)",
                metadata: ["suppressed": .stringConvertible(count)])
        }
    }
}
