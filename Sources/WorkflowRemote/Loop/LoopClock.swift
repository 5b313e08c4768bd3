/// Where the loop and its role drivers read the time: the monotonic clock in production, the
/// simulator's virtual clock in its tests (which advances only when the simulation says so, so a
/// seed replays exactly). Every deadline, lease and heartbeat of the remote protocol is measured
/// on it.
protocol LoopClock: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }
}

/// The process's monotonic clock (`ContinuousClock`): the clock of every runtime outside tests.
struct MonotonicLoopClock: LoopClock {
    var now: ContinuousClock.Instant { .now }
}
