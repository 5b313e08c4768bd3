import RemoteTestSupport
import Workflow
import WorkflowRemote

/// The parent's tree in a driver simulation: one remote counter (`CounterWorkflow`, step 1) per
/// key, placed on any worker, and, for each of `nestedKeys`, a remote `NestedWorkflow` placed on
/// a nested worker (pool "middle"), whose own remote counter runs on one of that worker's
/// workers: events to it pass through the middle process, outputs come back through it. Each
/// output is a counter's new count, so the outputs a child reports must run 1, 2, 3, … without a
/// gap or a repeat, whatever moved, failed or was replayed: the state keeps the last count seen
/// per child and says so when one does not follow.
struct SimulationBoardWorkflow: Workflow, Sendable {
    var keys: [String]
    var nestedKeys: Set<String> = []

    struct State: Sendable {
        /// The last count each child reported.
        var seen: [String: Int] = [:]
        /// Outputs that did not follow the last one.
        var violations: [String] = []
    }

    struct Rendering {
        var screens: [String: CounterScreen]
        var seen: [String: Int]
        var violations: [String]
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SimulationBoardWorkflow>) -> Rendering {
        var screens: [String: CounterScreen] = [:]
        for key in keys {
            let record = { (state: inout State, count: Int) -> Never? in
                let last = state.seen[key, default: 0]
                if count != last + 1 {
                    state.violations.append("child \(key): output \(count) after \(last): an event \(count <= last ? "applied twice" : "lost")")
                }
                state.seen[key] = max(last, count)
                return nil
            }
            if nestedKeys.contains(key) {
                screens[key] = NestedWorkflow(step: 1).remote(on: .pool("middle")).rendered(in: context, key: key, onOutput: record).counter
            } else {
                screens[key] = CounterWorkflow(step: 1, label: key).remote(on: .anyWorker).rendered(in: context, key: key, onOutput: record)
            }
        }
        return Rendering(screens: screens, seen: state.seen, violations: state.violations)
    }
}
