import Synchronization

/// How fast sessions were created, per tenth of all the sessions a run creates (its first 10 %,
/// the next 10 %, …): each creation answered counts in the tenth its number in the run falls in,
/// with the time since the previous answer (or since the step started), so that the tenths of a
/// run's several create steps add up and the pauses between the steps are in none.
final class CreationPace: Sendable {
    /// A tenth's part in one create step: the sessions created and the seconds they took.
    struct Tenth: Sendable {
        var sessions = 0
        var seconds = 0.0
    }

    private struct State {
        var created = 0
        var last: UInt64
        var tenths = [Tenth](repeating: Tenth(), count: 10)
    }
    private let state: Mutex<State>
    /// The sessions created before this step: the step's first is number `offset + 1`.
    let offset: Int
    /// All the sessions the run creates.
    let total: Int

    /// A step creating sessions `offset + 1`… of `total`, started at `startedAt` (ns).
    init(offset: Int, total: Int, startedAt: UInt64) {
        self.offset = offset
        self.total = max(total, 1)
        state = Mutex(State(last: startedAt))
    }

    /// Which tenth session number `number` (from 1) is in.
    func tenth(of number: Int) -> Int { min(9, (number - 1) * 10 / total) }

    /// A creation was answered at `now`. Returns the tenth it was the last of, with that tenth's
    /// part in this step, if it was.
    func created(at now: UInt64) -> (tenth: Int, part: Tenth)? {
        state.withLock { state in
            state.created += 1
            let number = offset + state.created
            let index = tenth(of: number)
            state.tenths[index].sessions += 1
            state.tenths[index].seconds += Double(now - min(now, state.last)) / 1e9
            state.last = max(state.last, now)
            return number == total || tenth(of: number + 1) != index ? (index, state.tenths[index]) : nil
        }
    }

    /// Every tenth's part in this step.
    var tenths: [Tenth] { state.withLock { $0.tenths } }
}
