import Workflow
import WorkflowRemote

/// A remotable workflow that itself renders a remote counter: with the nested workflow on one
/// worker and the counter on a worker of that worker, the tree spans three processes.
public struct NestedWorkflow: RemotableWorkflow, Equatable {
    public var step: Int

    public init(step: Int) {
        self.step = step
    }

    public typealias State = Void
    public typealias Output = Int

    public func render(state: Void, context: RenderContext<NestedWorkflow>) -> NestedScreen {
        let counter = CounterWorkflow(step: step, label: "nested")
            .remote(on: .anyWorker)
            .rendered(in: context, key: "inner")
        return NestedScreen(counter: counter, middleStep: step)
    }

    public func placeholderRendering() -> NestedScreen {
        NestedScreen(counter: CounterWorkflow(step: step).placeholderRendering(), middleStep: step)
    }
}

/// The nested workflow's rendering: the inner counter's screen, passed through.
public struct NestedScreen: Codable, Sendable {
    public var counter: CounterScreen
    public var middleStep: Int
}

/// Everything the test worker can host.
public let remoteTestRegistry = RemotableRegistry()
    .registering(CounterWorkflow.self)
    .registering(NestedWorkflow.self)
    .registering(RowListWorkflow.self)
    .registering(OutputCountingWorkflow.self)
    .registering(LoggingCounterWorkflow.self)
    .registering(ListPaneWorkflow.self)
    .registering(DetailPaneWorkflow.self)
    .registering(LedgerWorkflow.self)
    .registering(SlowCounterWorkflow.self)
