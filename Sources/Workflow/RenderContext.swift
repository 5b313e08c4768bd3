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

    /// Renders `workflow` as a child whose outputs go straight to `passOutput`, on the loop, as
    /// the child emits them, instead of becoming actions of this workflow. For a runtime's own
    /// root that only passes its one child's outputs on (a worker's hosted child): the action per
    /// output it would otherwise apply changes nothing but costs the runtime's hottest path a
    /// closure call, an action and its application. The runtime's nodes override it; any other
    /// context calls `passOutput` from a no-op action's output map.
    @_spi(WorkflowRuntime) open func render<Child: Workflow>(
        workflow: Child,
        key: String,
        passingOutputsTo passOutput: @escaping (Child.Output) -> Void
    ) -> Child.Rendering {
        render(workflow: workflow, key: key, outputMap: { output in
            passOutput(output)
            return .noAction
        })
    }

    /// Makes a sink that turns each event into an action of this workflow. The sink keeps this
    /// pass's `onEvent`: sent to after later passes, it still applies the action *this* closure
    /// makes, to the workflow's current state (never the closure a later pass declared in the same
    /// place), and it becomes a no-op once the workflow is torn down or once a pass declares no
    /// sink of the same event and action types. See `Sink`.
    open func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == WorkflowType {
        fatalError("RenderContext is abstract; \(Self.self) must override makeSink(of:onEvent:)")
    }

    /// Keeps the sinks of `eventType` and `actionType` this workflow made in earlier passes live
    /// through this pass, as making one more of that kind would, without making one. For runtime
    /// code that holds one sink for a node's whole life (a remote child's proxy), so each render
    /// pass does not allocate a sink only to declare it. Returns `false` where it cannot (a test's
    /// context): there, make the sink again.
    package func keepSinks<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type, actionType: Action.Type
    ) -> Bool where Action.WorkflowType == WorkflowType {
        sinkKind(of: eventType, actionType: actionType).map { keepSinks(ofKind: $0) } ?? false
    }

    /// The kind of the sinks of `eventType` and `actionType` (`nil` where sinks cannot be kept),
    /// for `keepSinks(ofKind:)`: asked once, when the kept sink is made, because naming the kind
    /// looks a generic class's metadata up at run time (hundreds of instructions a pass).
    package func sinkKind<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type, actionType: Action.Type
    ) -> ObjectIdentifier? where Action.WorkflowType == WorkflowType {
        nil
    }

    /// `keepSinks(of:actionType:)` for a kind `sinkKind(of:actionType:)` named.
    package func keepSinks(ofKind kind: ObjectIdentifier) -> Bool {
        false
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
