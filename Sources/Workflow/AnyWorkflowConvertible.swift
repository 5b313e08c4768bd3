/// Anything that can stand in for a workflow with a given rendering and output.
///
/// Parents render children through this protocol so that wrappers (`AnyWorkflow`, mapped
/// workflows, workers, remote proxies) render exactly like the concrete workflow they wrap.
public protocol AnyWorkflowConvertible<Rendering, Output> {
    associatedtype Rendering
    associatedtype Output

    /// The type-erased form. Child identity stays that of the wrapped concrete type.
    func asAnyWorkflow() -> AnyWorkflow<Rendering, Output>

    /// Renders this value as a child of the workflow that owns `context`. What every
    /// `rendered(in:…)` and `running(in:…)` call comes down to; rarely called directly.
    ///
    /// Why it is a requirement: a concrete `Workflow` renders itself straight through the
    /// context (the default for workflows), with no type-erased wrapper, no wrapping closures and
    /// no extra allocation per child and pass; wrappers (the default for everything else) render
    /// through `asAnyWorkflow()`, keeping the wrapped workflow's identity. Either way the child is
    /// identified by its concrete workflow type and `key`.
    func renderAsChild<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering
}

extension AnyWorkflowConvertible {
    /// Wrappers render through their type-erased form, which renders the wrapped workflow.
    @inlinable
    public func renderAsChild<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        asAnyWorkflow().render(in: context, key: key, outputMap: outputMap)
    }
}

extension Workflow {
    /// A concrete workflow renders itself through the context: no wrapper, nothing allocated.
    @inlinable
    public func renderAsChild<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        context.render(workflow: self, key: key, outputMap: outputMap)
    }
}

extension AnyWorkflowConvertible {
    /// Renders this workflow as a child of the workflow that owns `context`, mapping each child
    /// output to an action of the parent. Children are identified by their concrete type plus
    /// `key`: rendering the same pair again on the next pass keeps the child's state.
    @inlinable
    public func rendered<Parent, Action>(
        in context: RenderContext<Parent>,
        key: String = "",
        outputMap: @escaping (Output) -> Action
    ) -> Rendering where Action: WorkflowAction, Action.WorkflowType == Parent {
        renderAsChild(in: context, key: key, outputMap: { AnyWorkflowAction(outputMap($0)) })
    }

    /// Renders a child whose outputs the parent's `Output` type forwards unchanged.
    @inlinable
    public func rendered<Parent>(in context: RenderContext<Parent>, key: String = "") -> Rendering
    where Parent.Output == Output {
        renderAsChild(in: context, key: key, outputMap: { AnyWorkflowAction(sendingOutput: $0) })
    }
}

extension AnyWorkflowConvertible where Output == Never {
    /// Renders a child that never reports output.
    @inlinable
    public func rendered<Parent>(in context: RenderContext<Parent>, key: String = "") -> Rendering {
        renderAsChild(in: context, key: key, outputMap: ignoreOutput)
    }
}

extension AnyWorkflowConvertible where Rendering == Void {
    /// Runs a rendering-less child (a worker, typically) for as long as it keeps being rendered.
    @inlinable
    public func running<Parent>(in context: RenderContext<Parent>, key: String = "")
    where Parent.Output == Output {
        rendered(in: context, key: key)
    }

    /// Runs a rendering-less child, mapping its outputs to parent actions.
    @inlinable
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
    @inlinable
    public func rendered<Parent>(
        in context: RenderContext<Parent>,
        key: String = "",
        onOutput apply: @escaping (inout Parent.State, Output) -> Parent.Output?
    ) -> Rendering {
        renderAsChild(in: context, key: key, outputMap: { output in
            AnyWorkflowAction<Parent> { state, _ in apply(&state, output) }
        })
    }
}

/// An output map that drops the output (generic, so it also serves `Never` outputs).
@usableFromInline func ignoreOutput<Output, Parent: Workflow>(_ output: Output) -> AnyWorkflowAction<Parent> {
    .noAction
}

extension AnyWorkflowConvertible where Output: WorkflowAction {
    /// Renders a child whose outputs are actions of the parent, applying each as it comes:
    /// workflow-swift's shape for a child made with `onOutput(_:)` or `mapOutput` into actions.
    @inlinable
    public func rendered<Parent>(in context: RenderContext<Parent>, key: String = "") -> Rendering
    where Output.WorkflowType == Parent {
        renderAsChild(in: context, key: key, outputMap: { AnyWorkflowAction($0) })
    }
}

extension AnyWorkflowConvertible where Rendering == Void, Output: WorkflowAction {
    /// Runs a rendering-less child whose outputs are actions of the parent, applying each.
    @inlinable
    public func running<Parent>(in context: RenderContext<Parent>, key: String = "")
    where Output.WorkflowType == Parent {
        rendered(in: context, key: key)
    }
}

extension AnyWorkflowConvertible {
    /// This child with each output turned into an inline action of `Parent`: `apply` may change
    /// the parent's state and return an output for the parent's own parent. workflow-swift's
    /// `child.onOutput { state, output in … }.rendered(in: context)`; identity stays the child's.
    public func onOutput<Parent>(
        _ apply: @escaping (inout Parent.State, Output) -> Parent.Output?
    ) -> AnyWorkflow<Rendering, AnyWorkflowAction<Parent>> {
        asAnyWorkflow().mapOutput { output in
            AnyWorkflowAction<Parent> { state in apply(&state, output) }
        }
    }
}
