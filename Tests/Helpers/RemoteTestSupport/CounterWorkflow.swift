import Workflow
import WorkflowRemote

/// A remotable counter: each event adds `step` and reports the new count as output.
public struct CounterWorkflow: RemotableWorkflow, Equatable {
    public var step: Int
    public var label: String

    public init(step: Int = 1, label: String = "counter") {
        self.step = step
        self.label = label
    }

    public struct State: Codable, Equatable, Sendable {
        public var count = 0
    }

    public typealias Output = Int

    public func makeInitialState() -> State { State() }

    public func render(state: State, context: RenderContext<CounterWorkflow>) -> CounterScreen {
        CounterScreen(
            label: label, count: state.count, step: step,
            onIncrement: context.makeSink(of: Int.self) { times in
                AnyWorkflowAction<CounterWorkflow> { state, context in
                    state.count += times * context[workflowValue: \.step]
                    return state.count
                }
            })
    }

    public func placeholderRendering() -> CounterScreen {
        CounterScreen(label: label, count: -1, step: step, onIncrement: .inert)
    }
}

/// The counter's rendering.
public struct CounterScreen: Codable, Sendable {
    public var label: String
    public var count: Int
    public var step: Int
    /// Adds `step` this many times.
    public var onIncrement: Sink<Int>
}
