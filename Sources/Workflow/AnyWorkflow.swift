/// A type-erased workflow.
///
/// Erasure changes only the static type: the runtime still identifies the child by the wrapped
/// concrete workflow type (plus key), so wrapping never resets a child's state.
public struct AnyWorkflow<Rendering, Output> {
    let storage: AnyWorkflowStorage<Rendering, Output>

    /// Wraps `workflow`; an `AnyWorkflow` (itself a `Workflow`) is taken as it is rather than
    /// wrapped again, as workflow-swift does, so erasing twice adds no level to the tree.
    public init<W: Workflow>(_ workflow: W) where W.Rendering == Rendering, W.Output == Output {
        // A comparison of types rather than `as?`: a dynamic cast per erased child per pass costs more.
        if W.self == AnyWorkflow<Rendering, Output>.self {
            self = reinterpret(workflow, as: AnyWorkflow<Rendering, Output>.self)
            return
        }
        storage = WrappedWorkflowStorage(workflow: workflow, mapRendering: { $0 }, mapOutput: { $0 })
    }

    /// Wraps anything that stands in for a workflow; an `AnyWorkflow` is taken as it is, so
    /// code written for workflow-swift's `AnyWorkflow(anyWorkflow)` compiles and costs nothing.
    public init<Convertible: AnyWorkflowConvertible>(_ convertible: Convertible)
    where Convertible.Rendering == Rendering, Convertible.Output == Output {
        self = convertible.asAnyWorkflow()
    }

    init(storage: AnyWorkflowStorage<Rendering, Output>) {
        self.storage = storage
    }

    /// The concrete type of the wrapped workflow: the child's identity.
    public var workflowType: any Workflow.Type { storage.workflowType }

    /// The wrapped workflow value, for tests and diagnostics.
    public var base: any Workflow { storage.base }

    @usableFromInline func render<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        storage.render(in: context, key: key, outputMap: outputMap)
    }
}

extension AnyWorkflow: AnyWorkflowConvertible {
    public func asAnyWorkflow() -> AnyWorkflow<Rendering, Output> { self }
}

extension AnyWorkflow {
    /// Transforms the rendering while keeping the wrapped workflow's identity.
    public func mapRendering<NewRendering>(
        _ transform: @escaping (Rendering) -> NewRendering
    ) -> AnyWorkflow<NewRendering, Output> {
        AnyWorkflow<NewRendering, Output>(storage: storage.mapRendering(transform))
    }

    /// Transforms each output while keeping the wrapped workflow's identity.
    public func mapOutput<NewOutput>(
        _ transform: @escaping (Output) -> NewOutput
    ) -> AnyWorkflow<Rendering, NewOutput> {
        AnyWorkflow<Rendering, NewOutput>(storage: storage.mapOutput(transform))
    }
}

/// The erased operations of a wrapped workflow (a class so generic subclasses can hold the
/// concrete type).
class AnyWorkflowStorage<Rendering, Output> {
    var workflowType: any Workflow.Type { fatalError("abstract") }
    var base: any Workflow { fatalError("abstract") }

    func render<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        fatalError("abstract")
    }

    func mapRendering<NewRendering>(
        _ transform: @escaping (Rendering) -> NewRendering
    ) -> AnyWorkflowStorage<NewRendering, Output> {
        fatalError("abstract")
    }

    func mapOutput<NewOutput>(
        _ transform: @escaping (Output) -> NewOutput
    ) -> AnyWorkflowStorage<Rendering, NewOutput> {
        fatalError("abstract")
    }
}

final class WrappedWorkflowStorage<W: Workflow, Rendering, Output>: AnyWorkflowStorage<Rendering, Output> {
    let workflow: W
    let renderingTransform: (W.Rendering) -> Rendering
    let outputTransform: (W.Output) -> Output

    init(
        workflow: W,
        mapRendering: @escaping (W.Rendering) -> Rendering,
        mapOutput: @escaping (W.Output) -> Output
    ) {
        self.workflow = workflow
        self.renderingTransform = mapRendering
        self.outputTransform = mapOutput
    }

    override var workflowType: any Workflow.Type { W.self }
    override var base: any Workflow { workflow }

    override func render<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Output) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        let transform = outputTransform
        let rendering = context.render(workflow: workflow, key: key, outputMap: { outputMap(transform($0)) })
        return renderingTransform(rendering)
    }

    override func mapRendering<NewRendering>(
        _ transform: @escaping (Rendering) -> NewRendering
    ) -> AnyWorkflowStorage<NewRendering, Output> {
        let inner = renderingTransform
        return WrappedWorkflowStorage<W, NewRendering, Output>(
            workflow: workflow, mapRendering: { transform(inner($0)) }, mapOutput: outputTransform)
    }

    override func mapOutput<NewOutput>(
        _ transform: @escaping (Output) -> NewOutput
    ) -> AnyWorkflowStorage<Rendering, NewOutput> {
        let inner = outputTransform
        return WrappedWorkflowStorage<W, Rendering, NewOutput>(
            workflow: workflow, mapRendering: renderingTransform, mapOutput: { transform(inner($0)) })
    }
}

extension AnyWorkflowConvertible {
    /// Transforms the rendering; the child keeps its identity.
    public func mapRendering<NewRendering>(
        _ transform: @escaping (Rendering) -> NewRendering
    ) -> AnyWorkflow<NewRendering, Output> {
        asAnyWorkflow().mapRendering(transform)
    }

    /// Transforms each output; the child keeps its identity.
    public func mapOutput<NewOutput>(
        _ transform: @escaping (Output) -> NewOutput
    ) -> AnyWorkflow<Rendering, NewOutput> {
        asAnyWorkflow().mapOutput(transform)
    }

    /// Drops every output: for children whose reports the parent does not care about.
    public func ignoringOutput<NewOutput>(as type: NewOutput.Type = Never.self) -> AnyWorkflow<Rendering, NewOutput> {
        asAnyWorkflow().mapOutputToOptional { _ in nil }
    }
}

extension AnyWorkflowConvertible where Output == Never {
    /// Declares an output type for a child that reports nothing, so it fits where a parent
    /// expects outputs of `NewOutput` (workflow-swift's `mapOutput(to:)`); no output ever flows.
    public func mapOutput<NewOutput>(to type: NewOutput.Type) -> AnyWorkflow<Rendering, NewOutput> {
        asAnyWorkflow().mapOutput(outputOfNothing)
    }
}

/// The output map of a child that has none: `Never` has no values, so this never runs.
private func outputOfNothing<NewOutput>(_ nothing: Never) -> NewOutput {}

extension AnyWorkflow {
    /// Maps outputs and drops those mapped to `nil`. Used by `ignoringOutput` and `onOutput`.
    func mapOutputToOptional<NewOutput>(
        _ transform: @escaping (Output) -> NewOutput?
    ) -> AnyWorkflow<Rendering, NewOutput> {
        AnyWorkflow<Rendering, NewOutput>(storage: FilteringStorage(inner: storage, transform: transform))
    }
}

/// Storage whose outputs may be swallowed: a `nil` from the transform means "no output".
final class FilteringStorage<Rendering, Output, NewOutput>: AnyWorkflowStorage<Rendering, NewOutput> {
    let inner: AnyWorkflowStorage<Rendering, Output>
    let transform: (Output) -> NewOutput?

    init(inner: AnyWorkflowStorage<Rendering, Output>, transform: @escaping (Output) -> NewOutput?) {
        self.inner = inner
        self.transform = transform
    }

    override var workflowType: any Workflow.Type { inner.workflowType }
    override var base: any Workflow { inner.base }

    override func render<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (NewOutput) -> AnyWorkflowAction<Parent>
    ) -> Rendering {
        let transform = self.transform
        return inner.render(in: context, key: key, outputMap: { output in
            guard let mapped = transform(output) else { return .noAction }
            return outputMap(mapped)
        })
    }

    override func mapRendering<NewRendering>(
        _ transform: @escaping (Rendering) -> NewRendering
    ) -> AnyWorkflowStorage<NewRendering, NewOutput> {
        FilteringStorage<NewRendering, Output, NewOutput>(inner: inner.mapRendering(transform), transform: self.transform)
    }

    override func mapOutput<Next>(
        _ next: @escaping (NewOutput) -> Next
    ) -> AnyWorkflowStorage<Rendering, Next> {
        let first = transform
        return FilteringStorage<Rendering, Output, Next>(inner: inner, transform: { first($0).map(next) })
    }
}
