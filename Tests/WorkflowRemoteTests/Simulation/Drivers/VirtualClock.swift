import Synchronization
@testable import WorkflowRemote

/// The simulation's time: every runtime in it reads this clock (`LoopClock`), and it moves only
/// when the simulation advances it, so a seed replays exactly whatever the machine's load.
final class VirtualClock: LoopClock {
    /// Where virtual time starts: read once, and only differences from it matter.
    let origin: ContinuousClock.Instant
    private let current: Mutex<ContinuousClock.Instant>

    init() {
        let origin = ContinuousClock.now
        self.origin = origin
        current = Mutex(origin)
    }

    var now: ContinuousClock.Instant { current.withLock { $0 } }

    /// Virtual time since the run began.
    var elapsed: Duration { now - origin }

    func advance(by duration: Duration) {
        current.withLock { $0 += duration }
    }

    func advance(to instant: ContinuousClock.Instant) {
        current.withLock { $0 = max($0, instant) }
    }
}
