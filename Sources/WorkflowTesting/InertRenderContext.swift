@_spi(WorkflowRuntime) import Workflow

/// A render context that renders a subtree for real but lets nothing happen: sinks drop their
/// events, side effects (and so workers) never start, children render the same way.
///
/// The tester uses it to recover from an unexpected child: after recording the failure it still
/// has to return a `Child.Rendering`, and rendering the child inertly produces a genuine one
/// without crashing the test run or starting real work.
final class InertRenderContext<WorkflowType: Workflow>: RenderContext<WorkflowType> {
    override init() {
        super.init()
    }

    override func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<WorkflowType>
    ) -> Child.Rendering {
        renderInertly(workflow)
    }

    override func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == WorkflowType {
        Sink { _ in }
    }

    override func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {}
}

/// Renders `workflow` from its initial state with an `InertRenderContext`.
func renderInertly<W: Workflow>(_ workflow: W) -> W.Rendering {
    workflow.render(state: workflow.makeInitialState(), context: InertRenderContext<W>())
}
