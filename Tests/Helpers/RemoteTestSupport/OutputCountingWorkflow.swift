import Workflow
import WorkflowRemote

/// A parent that counts the outputs of its counter child and renders the count next to the
/// child's rendering. The counter reports its new count for every event, so in every frame a
/// parent publishes, `counter.count == outputsSeen`: the child's state and the parent's record
/// of its outputs in step. Remotable itself, so it can be the middle of a tree spanning three
/// processes (its counter placed on a worker of its own worker).
public struct OutputCountingWorkflow: RemotableWorkflow, Equatable {
    /// Where the counter runs.
    public var counterPlacement: RemotePlacement

    public init(counterPlacement: RemotePlacement) {
        self.counterPlacement = counterPlacement
    }

    /// How many outputs of the counter this workflow has applied.
    public typealias State = Int
    /// Each counter output, passed on.
    public typealias Output = Int

    public func makeInitialState() -> Int { 0 }

    public func render(state: Int, context: RenderContext<OutputCountingWorkflow>) -> CountedScreen {
        let counter = CounterWorkflow(step: 1, label: "counted")
            .remote(on: counterPlacement)
            .rendered(in: context, key: "counter", onOutput: { state, count in
                state += 1
                return count
            })
        return CountedScreen(counter: counter, outputsSeen: state)
    }

    public func placeholderRendering() -> CountedScreen {
        CountedScreen(counter: CounterWorkflow(step: 1, label: "counted").placeholderRendering(), outputsSeen: -1)
    }
}

/// A counter's screen with how many of its outputs its parent has applied.
public struct CountedScreen: Codable, Sendable {
    public var counter: CounterScreen
    public var outputsSeen: Int

    /// Whether the child's rendering and its parent's count of its outputs are in step.
    public var isInStep: Bool { counter.count == outputsSeen }
}
