import Logging
import WireProtocol

/// What the loop (`RemoteEngine`) gives each of its role drivers: the same configuration, codec,
/// transport, clock, job queue, shared state, metrics and coder storage for both.
struct LoopResources {
    let configuration: RemoteRuntimeConfiguration
    let codec: any WireCodec
    /// The network: `LoopSockets` in a process, a simulated one in the simulator's tests.
    let sockets: any LoopTransport
    /// Where every deadline, lease and heartbeat reads the time (`LoopClock`).
    let clock: any LoopClock
    let jobs: RemoteJobQueue
    let shared: RuntimeSharedState
    let metrics: RemoteRuntimeMetrics
    /// The coder storage the loop's encodes and decodes of props, renderings and outputs reuse.
    let codingScratch: WireCodingScratch
}

/// What the parent's and the worker's drivers (`ParentDriver`, `WorkerDriver`) share as drivers
/// on the loop thread: the loop's resources, reading a socket in bounded slices, and warnings
/// caused by peers, rate limited per role.
protocol LoopRoleDriver: AnyObject {
    var resources: LoopResources { get }
    /// Bounds the warnings peers' traffic causes (and the ERROR replies that go with them).
    var peerWarnings: LogRateLimiter { get set }
}

extension LoopRoleDriver {
    var configuration: RemoteRuntimeConfiguration { resources.configuration }
    var logger: Logger { resources.configuration.logger }
    var codec: any WireCodec { resources.codec }
    var sockets: any LoopTransport { resources.sockets }
    /// The time now, on the loop's clock (`LoopResources.clock`).
    var now: ContinuousClock.Instant { resources.clock.now }
    var jobs: RemoteJobQueue { resources.jobs }
    var shared: RuntimeSharedState { resources.shared }
    var metrics: RemoteRuntimeMetrics { resources.metrics }
    var codingScratch: WireCodingScratch { resources.codingScratch }

    /// Receives and handles messages until none is waiting, 10,000 were handled, or half a
    /// heartbeat interval has passed: between slices the loop runs its jobs and timers (the
    /// heartbeats), and what is left is read on the next iteration.
    func handleSlice<Message>(of receive: () -> Message?, _ handle: (Message) -> Void) {
        let deadline = now + configuration.heartbeatInterval / 2
        var budget = 10_000
        while budget > 0, let message = receive() {
            budget -= 1
            handle(message)
            if now >= deadline { break }
        }
    }

    /// Logs a warning caused by a peer's traffic unless its kind is over its rate
    /// (`LogRateLimiter`), and returns whether it was logged. Callers answer the peer with ERROR
    /// only when it was: a peer flooding bad messages then costs neither log volume nor a queue
    /// of replies it never reads, and the warnings past the rate are still counted. `kind` is
    /// fixed text (it keys the limiter); anything the peer sent belongs in `detail`.
    @discardableResult
    func warnLimited(_ kind: String, detail: String? = nil, metadata: Logger.Metadata = [:], level: Logger.Level = .warning) -> Bool {
        guard peerWarnings.admit(kind, at: now) else { return false }
        logger.log(level: level, "\(kind)\(detail.map { ": \($0)" } ?? "")", metadata: metadata)
        return true
    }

    /// One line per kind of warning whose window ended with warnings suppressed: how many.
    func reportSuppressedWarnings() {
        for (kind, count) in peerWarnings.endedWindows(at: now) {
            logger.warning(
                "\(count) more warnings suppressed (at most \(peerWarnings.burst) per \(peerWarnings.window)): \(kind)",
                metadata: ["suppressed": .stringConvertible(count)])
        }
    }
}
