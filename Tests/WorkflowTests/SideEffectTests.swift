import Testing
import Workflow

// A side effect starts the first time a render pass declares its key, keeps running while later
// passes declare it again, and its lifetime ends at the first pass that does not.

enum EffectEvent: Sendable, Equatable {
    case started(String), ended(String)
}

/// Declares one side effect per entry of `state.keys`; can add/remove keys and re-render.
struct SideEffectsWorkflow: Workflow, Sendable {
    let probe: Probe<EffectEvent>

    struct State: Sendable {
        var keys: [String] = ["a"]
        var renders = 0
    }
    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = SideEffectsWorkflow
        case setKeys([String])
        case bump
        func apply(toState state: inout State, context: ApplyContext<SideEffectsWorkflow>) -> Never? {
            switch self {
            case .setKeys(let keys): state.keys = keys
            case .bump: state.renders += 1
            }
            return nil
        }
    }
    struct Screen: Sendable {
        var keys: [String]
        var bumps: Int
        var actions: Sink<Action>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SideEffectsWorkflow>) -> Screen {
        let probe = self.probe
        for key in state.keys {
            context.runSideEffect(key: key) { lifetime in
                probe.record(.started(key))
                lifetime.onEnded { probe.record(.ended(key)) }
            }
        }
        return Screen(keys: state.keys, bumps: state.renders, actions: context.makeSink(of: Action.self))
    }
}

/// A side effect that feeds events back into its own workflow from a task.
struct FeedingEffectWorkflow: Workflow, Sendable {
    typealias State = [Int]

    func makeInitialState() -> [Int] { [] }

    func render(state: [Int], context: RenderContext<FeedingEffectWorkflow>) -> [Int] {
        let sink = context.makeSink(of: Int.self) { value in
            AnyWorkflowAction<FeedingEffectWorkflow> { state, _ in
                state.append(value)
                return nil
            }
        }
        context.runSideEffect(key: "feed") { lifetime in
            let task = Task {
                for value in 1...5 { sink.send(value) }
            }
            lifetime.onEnded { task.cancel() }
        }
        return state
    }
}

@Suite struct SideEffectTests {
    @Test func sideEffectStartsOnceAcrossRendersAndEndsOnAbsence() async throws {
        let probe = Probe<EffectEvent>()
        let host = WorkflowHost(workflow: SideEffectsWorkflow(probe: probe))
        #expect(probe.log == [.started("a")], "started during the first render pass")

        let actions = host.rendering.actions
        for _ in 1...10 { actions.send(.bump) }
        try await rendering(of: host) { $0.bumps == 10 }
        #expect(probe.log == [.started("a")], "ten more render passes did not restart it")

        actions.send(.setKeys(["a", "b"]))
        try await rendering(of: host) { $0.keys == ["a", "b"] }
        #expect(probe.log == [.started("a"), .started("b")])

        actions.send(.setKeys(["b"]))
        try await rendering(of: host) { $0.keys == ["b"] }
        #expect(probe.log == [.started("a"), .started("b"), .ended("a")], "ended by the first pass without it")

        actions.send(.setKeys(["b", "a"]))
        try await rendering(of: host) { $0.keys == ["b", "a"] }
        #expect(probe.log.last == .started("a"), "declaring the key again starts a new one")

        await host.stop()
        let log = probe.log
        #expect(log.filter { $0 == .ended("a") }.count == 2)
        #expect(log.filter { $0 == .ended("b") }.count == 1, "host.stop() ends every remaining lifetime")
    }

    @Test func sideEffectCanFeedItsWorkflow() async throws {
        let host = WorkflowHost(workflow: FeedingEffectWorkflow())
        let values = try await rendering(of: host) { $0.count == 5 }
        #expect(values == [1, 2, 3, 4, 5])
        await host.stop()
    }
}
