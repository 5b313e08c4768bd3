/// What a workflow may do while it renders: render children, make sinks, run side effects.
///
/// A context belongs to one render pass of one workflow and is invalid once `render` returns:
/// everything it hands out (sinks, child renderings) is tied to that node, never to the context.
/// Subclassable only through the runtime's SPI, so tests (`WorkflowTesting`) can stand in for the
/// runtime without users being able to break its invariants.
open class RenderContext<WorkflowType: Workflow> {
    /// For the runtime and `WorkflowTesting` only.
    @_spi(WorkflowRuntime) public init() {}

    /// Renders `workflow` as a child identified by its concrete type and `key`, mapping its
    /// outputs to actions of this workflow. Prefer `child.rendered(in:key:)`.
    open func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<WorkflowType>
    ) -> Child.Rendering {
        fatalError("RenderContext is abstract; \(Self.self) must override render(workflow:key:outputMap:)")
    }

    /// Makes a sink that turns each event into an action of this workflow. The sink keeps this
    /// pass's `onEvent`: sent to after later passes, it still applies the action *this* closure
    /// makes, to the workflow's current state (never the closure a later pass declared in the same
    /// place), and it becomes a no-op once the workflow is torn down. See `Sink`.
    open func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == WorkflowType {
        fatalError("RenderContext is abstract; \(Self.self) must override makeSink(of:onEvent:)")
    }

    /// Runs `action` the first time a render pass declares `key`, and ends the `Lifetime` it is
    /// given at the first pass that does not (or when the workflow is torn down).
    open func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        fatalError("RenderContext is abstract; \(Self.self) must override runSideEffect(key:action:)")
    }

    /// The path of the rendering workflow from the root (stable type names and keys), which
    /// identifies it across processes.
    @_spi(WorkflowRuntime) open var nodePath: String { "" }

    /// The loop the rendering workflow's host runs on.
    @_spi(WorkflowRuntime) open var loop: (any RuntimeLoop)? { nil }
}

extension RenderContext {
    /// Makes a sink of actions of this workflow.
    public func makeSink<Action>(of actionType: Action.Type) -> Sink<Action>
    where Action: WorkflowAction & Sendable, Action.WorkflowType == WorkflowType {
        makeSink(of: Action.self, onEvent: { $0 })
    }

    /// Makes a sink whose values this workflow reports to its parent as outputs.
    public func makeOutputSink() -> Sink<WorkflowType.Output> where WorkflowType.Output: Sendable {
        makeSink(of: WorkflowType.Output.self, onEvent: { AnyWorkflowAction<WorkflowType>(sendingOutput: $0) })
    }
}

/// The context the runtime hands a node's `render`.
final class NodeRenderContext<W: Workflow>: RenderContext<W> {
    private unowned let node: WorkflowNode<W>
    private let subtree: SubtreeManager<W>
    private var isValid = true

    init(node: WorkflowNode<W>, subtree: SubtreeManager<W>) {
        self.node = node
        self.subtree = subtree
        super.init()
    }

    func invalidate() { isValid = false }

    private func checkValid(_ function: StaticString = #function) {
        precondition(
            isValid,
            "RenderContext<\(W.self)>.\(function) was called after render(state:context:) returned. "
                + "A context is only valid during the render pass it was passed to.")
    }

    override func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<W>
    ) -> Child.Rendering {
        checkValid()
        return subtree.render(workflow: workflow, key: key, outputMap: outputMap, parent: node)
    }

    override func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == W {
        checkValid()
        return subtree.makeSink(of: eventType, onEvent: onEvent, node: node)
    }

    override func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        checkValid()
        subtree.runSideEffect(key: key, action: action)
    }

    override var nodePath: String { node.path }
    override var loop: (any RuntimeLoop)? { node.host.loop }
}
