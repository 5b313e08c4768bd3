/// `AnyWorkflow` is a `Workflow` too, as in workflow-swift: code written for it passes an
/// `AnyWorkflow` where a `Workflow` is expected (a generic helper, `renderTester()`,
/// `expectWorkflow(type: AnyWorkflow<…>.self)`) and compiles unchanged.
///
/// Rendering an `AnyWorkflow` the usual way (`rendered(in:)`, `running(in:)`) still renders the
/// wrapped workflow directly, keeping its identity (see `renderAsChild` below). Only where the
/// erased value itself is used as a workflow (rendered through `context.render(workflow:)`, or
/// wrapped by `Workflow.ignoringOutput()`) is it a node of its own: one with no state that
/// renders the wrapped workflow as its child (key `""`) and reports that child's outputs.
extension AnyWorkflow: Workflow {
    public typealias State = Void

    /// Renders the wrapped workflow as this node's only child and reports its outputs as its own.
    public func render(state: Void, context: RenderContext<AnyWorkflow<Rendering, Output>>) -> Rendering {
        render(in: context, key: "", outputMap: { AnyWorkflowAction(sendingOutput: $0) })
    }

    /// Renders the wrapped workflow as the parent's child (not this wrapper): erasing a child
    /// never changes its identity. (Declared here so that `Workflow`'s default, which renders
    /// `self` as the child, does not apply.)
    public func renderAsChild<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        render(in: context, key: key, outputMap: outputMap)
    }
}

extension Workflow {
    /// Drops every output: for children whose reports the parent does not care about.
    ///
    /// The same as `AnyWorkflowConvertible.ignoringOutput(as:)` for a concrete workflow. For a
    /// value whose static type is `AnyWorkflow`, the erased value is the child (as in
    /// workflow-swift, whose tests expect `AnyWorkflow<…>` there), rendering the wrapped workflow
    /// beneath it.
    public func ignoringOutput<NewOutput>(as type: NewOutput.Type = Never.self) -> AnyWorkflow<Rendering, NewOutput> {
        AnyWorkflow<Rendering, NewOutput>(storage: FilteringStorage(
            inner: WrappedWorkflowStorage(workflow: self, mapRendering: { $0 }, mapOutput: { $0 }),
            transform: { _ in nil }))
    }
}
