import Testing
import Workflow

// Children are identified by concrete type + key: rendered again → same state; not rendered →
// torn down (side effects end, workers are cancelled, sinks go dead).

/// Renders one counter child whose label (props) changes with the parent's own state.
struct PropsParentWorkflow: Workflow, Sendable {
    struct State: Sendable { var ticks = 0 }
    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = PropsParentWorkflow
        case tick
        func apply(toState state: inout State, context: ApplyContext<PropsParentWorkflow>) -> Never? {
            state.ticks += 1
            return nil
        }
    }
    struct Screen: Sendable {
        var ticks: Int
        var counter: CounterScreen
        var onTick: Sink<Void>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<PropsParentWorkflow>) -> Screen {
        let counter = CounterWorkflow(label: "tick \(state.ticks)")
            .rendered(in: context, key: "counter", onOutput: { _, _ in nil })
        return Screen(ticks: state.ticks, counter: counter, onTick: context.makeSink(of: Action.self).contraMap { _ in .tick })
    }
}

/// What a child with a side effect and a worker reports about its lifecycle.
enum LifecycleEvent: Sendable, Hashable {
    case effectStarted, effectEnded, workerStarted, workerCancelled
}

/// A worker that runs until cancelled, reporting start and cancellation.
struct ParkedWorker: Worker {
    typealias Output = Int
    let probe: Probe<LifecycleEvent>

    func run() async -> Int {
        let (parked, release) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            probe.record(.workerStarted)
            for await _ in parked {}
        } onCancel: {
            probe.record(.workerCancelled)
            release.finish()
        }
        return 0
    }

    func isEquivalent(to otherWorker: ParkedWorker) -> Bool { true }
}

/// A counter that also runs a side effect and a worker for as long as it is rendered.
struct EffectfulChildWorkflow: Workflow, Sendable {
    let probe: Probe<LifecycleEvent>

    typealias State = Int
    struct Screen: Sendable {
        var count: Int
        var onIncrement: Sink<Void>
    }

    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<EffectfulChildWorkflow>) -> Screen {
        let probe = self.probe
        context.runSideEffect(key: "effect") { lifetime in
            probe.record(.effectStarted)
            lifetime.onEnded { probe.record(.effectEnded) }
        }
        ParkedWorker(probe: probe).running(in: context, key: "parked", outputMap: { _ in AnyWorkflowAction.noAction })
        let onIncrement = context.makeSink(of: Void.self) { _ in
            AnyWorkflowAction<EffectfulChildWorkflow> { state, _ in
                state += 1
                return nil
            }
        }
        return Screen(count: state, onIncrement: onIncrement)
    }
}

/// Shows or hides an `EffectfulChildWorkflow`; also ticks, to re-render without changing the child.
struct TogglingParentWorkflow: Workflow, Sendable {
    let probe: Probe<LifecycleEvent>

    struct State: Sendable {
        var showChild = true
        var ticks = 0
    }
    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = TogglingParentWorkflow
        case toggle, tick
        func apply(toState state: inout State, context: ApplyContext<TogglingParentWorkflow>) -> Never? {
            switch self {
            case .toggle: state.showChild.toggle()
            case .tick: state.ticks += 1
            }
            return nil
        }
    }
    struct Screen: Sendable {
        var child: EffectfulChildWorkflow.Screen?
        var ticks: Int
        var onToggle: Sink<Void>
        var onTick: Sink<Void>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<TogglingParentWorkflow>) -> Screen {
        let child = state.showChild ? EffectfulChildWorkflow(probe: probe).rendered(in: context, key: "child") : nil
        let sink = context.makeSink(of: Action.self)
        return Screen(
            child: child, ticks: state.ticks, onToggle: sink.contraMap { _ in .toggle }, onTick: sink.contraMap { _ in .tick })
    }
}

/// Renders two children under the same key but of different types.
struct SameKeyParentWorkflow: Workflow, Sendable {
    typealias State = Void
    struct Screen: Sendable {
        var counter: CounterScreen
        var other: EffectfulChildWorkflow.Screen
    }
    let probe: Probe<LifecycleEvent>

    func render(state: Void, context: RenderContext<SameKeyParentWorkflow>) -> Screen {
        Screen(
            counter: CounterWorkflow().rendered(in: context, key: "shared", onOutput: { _, _ in nil }),
            other: EffectfulChildWorkflow(probe: probe).rendered(in: context, key: "shared"))
    }
}

/// Renders the same child type and key twice in one pass: a programmer error.
struct DuplicateKeyParentWorkflow: Workflow, Sendable {
    typealias State = Void
    func render(state: Void, context: RenderContext<DuplicateKeyParentWorkflow>) -> Int {
        let first = CounterWorkflow().rendered(in: context, key: "twin", onOutput: { _, _ in nil })
        let second = CounterWorkflow().rendered(in: context, key: "twin", onOutput: { _, _ in nil })
        return first.count + second.count
    }
}

/// Renders the same counter child five different ways (plain and through each wrapper).
struct WrappingParentWorkflow: Workflow, Sendable {
    enum Mode: Int, Sendable, CaseIterable {
        case plain, erased, mappedRendering, mappedOutput, ignoringOutput
    }
    struct State: Sendable { var mode = Mode.plain }
    typealias Output = String
    struct Screen: Sendable {
        var mode: Mode
        var counter: CounterScreen
        var onNextMode: Sink<Void>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<WrappingParentWorkflow>) -> Screen {
        let child = CounterWorkflow(label: "\(state.mode)", reportEvery: 1)
        let counter: CounterScreen
        switch state.mode {
        case .plain:
            counter = child.rendered(in: context, key: "c", onOutput: { _, count in "plain \(count)" })
        case .erased:
            counter = AnyWorkflow(child).rendered(in: context, key: "c", onOutput: { _, count in "erased \(count)" })
        case .mappedRendering:
            counter = child.mapRendering { screen in
                var screen = screen
                screen.label = "mapped " + screen.label
                return screen
            }.rendered(in: context, key: "c", onOutput: { _, count in "mappedRendering \(count)" })
        case .mappedOutput:
            counter = child.mapOutput { "mappedOutput \($0)" }.rendered(in: context, key: "c")
        case .ignoringOutput:
            counter = child.ignoringOutput().rendered(in: context, key: "c")
        }
        let onNextMode = context.makeSink(of: Void.self) { _ in
            AnyWorkflowAction<WrappingParentWorkflow> { state, _ in
                state.mode = Mode(rawValue: state.mode.rawValue + 1) ?? .plain
                return nil
            }
        }
        return Screen(mode: state.mode, counter: counter, onNextMode: onNextMode)
    }
}

@Suite struct ChildLifecycleTests {
    @Test func childKeepsStateAndGetsNewPropsWhenParentReRenders() async throws {
        let host = WorkflowHost(workflow: PropsParentWorkflow())
        for expected in 1...3 {
            host.rendering.counter.onIncrement.send(())
            try await rendering(of: host) { $0.counter.count == expected }
        }
        host.rendering.onTick.send(())
        let screen = try await rendering(of: host) { $0.ticks == 1 }

        #expect(screen.counter.count == 3, "state survives the parent's re-render")
        #expect(screen.counter.label == "tick 1", "the child renders with the new props")
        #expect(screen.counter.previousLabel == "tick 0", "workflowDidChange saw the previous props")
        // One parent render per event (3 increments + 1 tick), each handing the child its props.
        #expect(screen.counter.propsChanges == 4)
        await host.stop()
    }

    @Test func childNotRenderedIsTornDown() async throws {
        let probe = Probe<LifecycleEvent>()
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: TogglingParentWorkflow(probe: probe), observers: [observer])
        #expect(Set(try await probe.next(2)) == [.effectStarted, .workerStarted])

        let oldChild = try #require(host.rendering.child)
        oldChild.onIncrement.send(())
        try await rendering(of: host) { $0.child?.count == 1 }

        host.rendering.onToggle.send(())
        try await rendering(of: host) { $0.child == nil }
        #expect(Set(try await probe.next(2)) == [.effectEnded, .workerCancelled])

        // A sink of the torn-down child is dropped without a crash...
        oldChild.onIncrement.send(())
        // ...and does not reach a new child of the same type and key either.
        host.rendering.onToggle.send(())
        try await rendering(of: host) { $0.child != nil }
        #expect(Set(try await probe.next(2)) == [.effectStarted, .workerStarted])
        oldChild.onIncrement.send(())
        host.rendering.onTick.send(())
        let screen = try await rendering(of: host) { $0.ticks == 1 }
        #expect(screen.child?.count == 0, "the new child starts fresh and ignores the old child's sink")

        let childPath = childPath(EffectfulChildWorkflow.self, key: "child", under: rootPath(TogglingParentWorkflow.self))
        let childActions = observer.events.filter {
            if case .actionApplied(_, childPath, _) = $0 { return true } else { return false }
        }
        #expect(childActions.count == 1, "only the first tap, sent while the child was alive, was applied")
        await host.stop()
    }

    @Test func sameKeyDifferentTypesAreTwoChildren() async throws {
        let probe = Probe<LifecycleEvent>()
        let host = WorkflowHost(workflow: SameKeyParentWorkflow(probe: probe))
        host.rendering.counter.onAdd.send(5)
        try await rendering(of: host) { $0.counter.count == 5 }
        host.rendering.other.onIncrement.send(())
        let screen = try await rendering(of: host) { $0.other.count == 1 }
        #expect(screen.counter.count == 5)

        let tree = await host.treeDescription()
        #expect(tree.contains("\(CounterWorkflow.workflowTypeName) key=\"shared\""))
        #expect(tree.contains("\(EffectfulChildWorkflow.workflowTypeName) key=\"shared\""))
        await host.stop()
    }

    @Test func duplicateChildKeyIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WorkflowHost(workflow: DuplicateKeyParentWorkflow())
        }
        if let result {
            let stderr = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(stderr.contains("CounterWorkflow"), "names the child type")
            #expect(stderr.contains("\"twin\""), "names the key")
        }
    }

    @Test func wrappersKeepTheWrappedChildsIdentity() async throws {
        let host = WorkflowHost(workflow: WrappingParentWorkflow())
        let outputs = host.outputs
        for mode in WrappingParentWorkflow.Mode.allCases {
            let before = try await rendering(of: host) { $0.mode == mode }
            #expect(before.counter.count == mode.rawValue, "state survives switching to \(mode)")
            before.counter.onIncrement.send(())
            let after = try await rendering(of: host) { $0.counter.count == mode.rawValue + 1 }
            if mode == .mappedRendering { #expect(after.counter.label == "mapped mappedRendering") }
            after.onNextMode.send(())
        }
        // The wrapped child's outputs went through each wrapper's mapping; ignoringOutput dropped its one.
        #expect(try await next(4, from: outputs) == ["plain 1", "erased 2", "mappedRendering 3", "mappedOutput 4"])
        await host.stop()
    }
}
