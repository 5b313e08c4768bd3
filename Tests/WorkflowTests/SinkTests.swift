import Testing
import Workflow

// Sinks are Sendable handles into the tree: every value sent is applied on the loop, one render
// pass per delivered event by default; sinks of torn-down workflows go dead quietly.

/// Exercises the three ways of making a sink, including two sinks of the same event and action
/// types that must each keep their own handler.
struct SinkKindsWorkflow: Workflow, Sendable {
    struct State: Sendable { var total = 0 }
    typealias Output = String

    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = SinkKindsWorkflow
        case add(Int)
        func apply(toState state: inout State, context: ApplyContext<SinkKindsWorkflow>) -> String? {
            guard case .add(let amount) = self else { return nil }
            state.total += amount
            return nil
        }
    }

    struct Screen: Sendable {
        var total: Int
        var actions: Sink<Action>
        var onText: Sink<String>
        var onPlus: Sink<Void>
        var onMinus: Sink<Void>
        var report: Sink<String>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SinkKindsWorkflow>) -> Screen {
        Screen(
            total: state.total,
            actions: context.makeSink(of: Action.self),
            onText: context.makeSink(of: String.self) { Action.add(Int($0) ?? 0) },
            onPlus: context.makeSink(of: Void.self) { _ in Action.add(1) },
            onMinus: context.makeSink(of: Void.self) { _ in Action.add(-1) },
            report: context.makeOutputSink())
    }
}

@Suite struct SinkTests {
    @Test func actionSinkAppliesEachActionWithOneRenderPassPerEvent() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: SinkKindsWorkflow(), observers: [observer])
        #expect(observer.renderCount(of: rootPath(SinkKindsWorkflow.self)) == 1, "init renders once")
        let sink = host.rendering.actions
        for amount in 1...5 { sink.send(.add(amount)) }
        try await rendering(of: host) { $0.total == 15 }
        _ = await host.treeDescription()  // loop barrier
        #expect(observer.renderCount(of: rootPath(SinkKindsWorkflow.self)) == 1 + 5)
        await host.stop()
    }

    @Test func eventSinkMapsEventsToActions() async throws {
        let host = WorkflowHost(workflow: SinkKindsWorkflow())
        host.rendering.onText.send("42")
        let screen = try await rendering(of: host) { $0.total != 0 }
        #expect(screen.total == 42)
        await host.stop()
    }

    @Test func sinksOfTheSameEventAndActionTypesKeepTheirOwnHandlers() async throws {
        let host = WorkflowHost(workflow: SinkKindsWorkflow())
        let screen = host.rendering
        screen.onPlus.send(())
        screen.onPlus.send(())
        screen.onMinus.send(())
        screen.actions.send(.add(100))
        let settled = try await rendering(of: host) { abs($0.total) > 50 }
        #expect(settled.total == 101, "plus, plus, minus, +100")
        await host.stop()
    }

    @Test func outputSinkReportsToTheHost() async throws {
        let host = WorkflowHost(workflow: SinkKindsWorkflow())
        let outputs = host.outputs
        host.rendering.report.send("hello")
        host.rendering.report.send("world")
        #expect(try await next(2, from: outputs) == ["hello", "world"])
        await host.stop()
    }

    @Test func sinkFromAnEarlierRenderingStillWorksWhileTheWorkflowLives() async throws {
        let host = WorkflowHost(workflow: SinkKindsWorkflow())
        let firstScreen = host.rendering
        firstScreen.actions.send(.add(1))
        try await rendering(of: host) { $0.total == 1 }
        firstScreen.actions.send(.add(1))
        try await rendering(of: host) { $0.total == 2 }
        await host.stop()
    }

    @Test func sinkOfAStoppedHostIsANoOp() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: SinkKindsWorkflow(), observers: [observer])
        let screen = host.rendering
        await host.stop()
        screen.actions.send(.add(1))
        screen.report.send("late")
        _ = await host.treeDescription()  // loop barrier: the late sends have been handled
        #expect(host.rendering.total == 0)
        #expect(!observer.events.contains { if case .actionApplied = $0 { true } else { false } })
    }

    @Test func sendingToASinkDuringRenderIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) {
            struct SendsDuringRender: Workflow, Sendable {
                typealias State = Void
                func render(state: Void, context: RenderContext<SendsDuringRender>) -> Int {
                    context.makeSink(of: Int.self) { _ in AnyWorkflowAction<SendsDuringRender>.noAction }.send(1)
                    return 0
                }
            }
            _ = WorkflowHost(workflow: SendsDuringRender())
        }
    }
}
