import Foundation
import Workflow
import WorkflowRemote

/// A remotable counter whose every action takes `actionMilliseconds` of its worker's time (a
/// costly computation, stood in for by a sleep of the thread that applies it) and emits no
/// output (only its rendering shows the count): what a worker does when its actions are slow and
/// it has nothing to send meanwhile, beside what a local child would do (be slow, nothing else).
public struct SlowCounterWorkflow: RemotableWorkflow, Equatable {
    public var actionMilliseconds: Int

    public init(actionMilliseconds: Int) {
        self.actionMilliseconds = actionMilliseconds
    }

    public struct State: Codable, Equatable, Sendable {
        public var count = 0
    }

    public typealias Output = Never

    public func makeInitialState() -> State { State() }

    public func render(state: State, context: RenderContext<SlowCounterWorkflow>) -> CounterScreen {
        CounterScreen(
            label: "slow", count: state.count, step: 1,
            onIncrement: context.makeSink(of: Int.self) { times in
                AnyWorkflowAction<SlowCounterWorkflow> { state, context in
                    usleep(UInt32(context[workflowValue: \.actionMilliseconds] * 1_000))
                    state.count += times
                    return nil
                }
            })
    }

    public func placeholderRendering() -> CounterScreen {
        CounterScreen(label: "slow", count: -1, step: 1, onIncrement: .inert)
    }
}

/// A parent of one `SlowCounterWorkflow` placed on `placement`.
public struct SlowCounterParentWorkflow: Workflow, Sendable {
    public var actionMilliseconds: Int
    public var placement: RemotePlacement

    public init(actionMilliseconds: Int, placement: RemotePlacement) {
        self.actionMilliseconds = actionMilliseconds
        self.placement = placement
    }

    public typealias State = Void
    public typealias Output = Never

    public func render(state: Void, context: RenderContext<SlowCounterParentWorkflow>) -> CounterScreen {
        SlowCounterWorkflow(actionMilliseconds: actionMilliseconds)
            .remote(on: placement)
            .rendered(in: context, key: "slow")
    }
}
