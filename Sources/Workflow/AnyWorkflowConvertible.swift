/// Anything that can stand in for a workflow with a given rendering and output.
///
/// Parents render children through this protocol so that wrappers (`AnyWorkflow`, mapped
/// workflows, workers, remote proxies) render exactly like the concrete workflow they wrap.
public protocol AnyWorkflowConvertible<Rendering, Output> {
    associatedtype Rendering
    associatedtype Output

    /// The type-erased form. Child identity stays that of the wrapped concrete type.
    func asAnyWorkflow() -> AnyWorkflow<Rendering, Output>
}

extension AnyWorkflowConvertible {
    /// Renders this workflow as a child of the workflow that owns `context`, mapping each child
    /// output to an action of the parent. Children are identified by their concrete type plus
    /// `key`: rendering the same pair again on the next pass keeps the child's state.
    public func rendered<Parent, Action>(
        in context: RenderContext<Parent>,
        key: String = "",
        outputMap: @escaping (Output) -> Action
    ) -> Rendering where Action: WorkflowAction, Action.WorkflowType == Parent {
        asAnyWorkflow().render(in: context, key: key, outputMap: { AnyWorkflowAction(outputMap($0)) })
    }

    /// Renders a child whose outputs the parent's `Output` type forwards unchanged.
    public func rendered<Parent>(in context: RenderContext<Parent>, key: String = "") -> Rendering
    where Parent.Output == Output {
        asAnyWorkflow().render(in: context, key: key, outputMap: { AnyWorkflowAction(sendingOutput: $0) })
    }
}

extension AnyWorkflowConvertible where Output == Never {
    /// Renders a child that never reports output.
    public func rendered<Parent>(in context: RenderContext<Parent>, key: String = "") -> Rendering {
        asAnyWorkflow().render(in: context, key: key, outputMap: ignoreOutput)
    }
}

extension AnyWorkflowConvertible where Rendering == Void {
    /// Runs a rendering-less child (a worker, typically) for as long as it keeps being rendered.
    public func running<Parent>(in context: RenderContext<Parent>, key: String = "")
    where Parent.Output == Output {
        rendered(in: context, key: key)
    }

    /// Runs a rendering-less child, mapping its outputs to parent actions.
    public func running<Parent, Action>(
        in context: RenderContext<Parent>,
        key: String = "",
        outputMap: @escaping (Output) -> Action
    ) where Action: WorkflowAction, Action.WorkflowType == Parent {
        rendered(in: context, key: key, outputMap: outputMap)
    }
}

extension AnyWorkflowConvertible {
    /// Renders a child and handles its outputs inline: `apply` may change the parent's state and
    /// return an output for the parent's own parent. Saves declaring an action type for a one-line
    /// reaction.
    public func rendered<Parent>(
        in context: RenderContext<Parent>,
        key: String = "",
        onOutput apply: @escaping (inout Parent.State, Output) -> Parent.Output?
    ) -> Rendering {
        asAnyWorkflow().render(in: context, key: key, outputMap: { output in
            AnyWorkflowAction<Parent> { state, _ in apply(&state, output) }
        })
    }
}

/// An output map that drops the output (generic, so it also serves `Never` outputs).
func ignoreOutput<Output, Parent: Workflow>(_ output: Output) -> AnyWorkflowAction<Parent> {
    .noAction
}
