import Synchronization
import Workflow

/// The lease invariant of one worker process that hosts no remote children of its own: every
/// action its hosted children apply (each an event from its parent) is applied within the
/// liveness window after it last heard from its parent (a message read, or a handshake), else
/// the parent may have placed the child elsewhere meanwhile and two copies applied events.
/// Recorded independently of the worker's state machine: the transport says when the process
/// heard (`heard()`), the hosts' observer (`RemoteRuntimeConfiguration.hostedChildObservers`)
/// when an action was applied.
final class LeaseWatch: WorkflowObserver {
    private struct State {
        var lastHeard: ContinuousClock.Instant
        var violations: [String] = []
        var actions = 0
        var ended = false
    }

    let worker: Int
    let clock: VirtualClock
    let window: Duration
    private let state: Mutex<State>

    init(worker: Int, clock: VirtualClock, window: Duration) {
        self.worker = worker
        self.clock = clock
        self.window = window
        state = Mutex(State(lastHeard: clock.now))
    }

    /// The process read a message from its parent, or its connection completed a handshake.
    func heard() {
        let now = clock.now
        state.withLock { $0.lastHeard = now }
    }

    func actionWasApplied(action: String, path: String, producedOutput: Bool) {
        let now = clock.now
        state.withLock { state in
            guard !state.ended else { return }
            state.actions += 1
            let silence = now - state.lastHeard
            if silence > window {
                state.violations.append("worker \(worker) applied an action at \(path) \(silence) after it last heard from its parent (its lease is \(window))")
            }
        }
    }

    /// The process crashed: what its runtime's teardown still applies is not its hosted
    /// children's work (a crashed process runs nothing), so it is not checked.
    func processEnded() {
        state.withLock { $0.ended = true }
    }

    /// How many actions were checked.
    var actions: Int { state.withLock { $0.actions } }

    /// The violations seen since the last call.
    func takeViolations() -> [String] {
        state.withLock { state in
            defer { state.violations.removeAll() }
            return state.violations
        }
    }
}
