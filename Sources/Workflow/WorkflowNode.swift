/// The runtime's record of one live workflow: its latest props, its state, and its subtree.
///
/// Nodes are created the first time a parent renders a (type, key) pair and live until a render
/// pass of the parent no longer renders that pair. They are confined to the host's loop.
///
/// A node is also the `RenderContext` its workflow renders with: the context is valid only while
/// the node renders (checked on every call), so one object serves every pass and a node costs a
/// single allocation. A child node is a `ChildNode`, which adds the parent's output map; a leaf
/// allocates no `SubtreeManager` until it first renders a child or runs a side effect.
class WorkflowNode<W: Workflow>: RenderContext<W>, AnyWorkflowNode {
    private(set) var workflow: W
    private(set) var state: W.State
    let host: HostContext
    let key: String
    private var cachedPath: String?
    /// `stableIdentity(of: W.self)`, which reflects on the type: looked up once per node, not
    /// once per snapshot (a session's tree is snapshotted for every event it commits).
    private var cachedIdentity: (name: String, version: Int)?
    /// The node's number in the host's registry, which routes its sinks' events to it.
    let id: UInt64
    /// Children and side effects; `nil` until the node first declares one.
    private var subtree: SubtreeManager<W>?
    /// The render pass's sinks, in one value: each step of a pass is one exclusivity-checked
    /// access.
    private var passes = NodePasses()
    /// Whether `render` is running: the context is only valid then. Kept out of `passes`, like
    /// `pendingChildSnapshots`: a property only ever loaded and stored whole needs no run-time
    /// exclusivity check (the whole-module optimiser drops it), one reached through mutating
    /// calls does, and every access to it pays (measured: in `passes`, a first render paid one
    /// check more per node).
    private var isRendering = false
    /// Children's snapshots to restore as they are rendered again (the first pass after a restore).
    private var pendingChildSnapshots: [TreeSnapshot.Child]
    /// The context of the last applied action (a `RuntimeApplyContext<W>`), kept for the next one when
    /// nothing else holds it. Typed `AnyObject?`: this code is not specialised for `W`, and an
    /// `ApplyContext<W>?` would cost a generic metadata lookup on every action.
    private var spareApplyContext: AnyObject?
    /// How to compare two states (`nil` when `W.State` is not `Equatable`), found out by the first
    /// action that needs it rather than with a dynamic cast on every action.
    private var stateEquality: ((W.State, W.State) -> Bool)?
    private var stateEqualityKnown = false
    /// Where the root's outputs go (the host); child nodes override `emit` instead.
    var onOutput: ((W.Output) -> Void)?
    /// The node's `WorkflowSession`, made the first time an observer needs it.
    private var cachedSession: WorkflowSession?

    init(workflow: W, key: String, host: HostContext, snapshot: TreeSnapshot?) {
        self.workflow = workflow
        self.key = key
        self.host = host
        var restored: W.State?
        var rejection: String?
        // A node whose state is not Codable (stateless workflows, workers) saved no state: there
        // is nothing to restore, so starting fresh is expected, not a rejected snapshot.
        if let snapshot, snapshot.state != nil || W.State.self is any Decodable.Type {
            do {
                restored = try StateCoding.decode(snapshot, for: W.self)
            } catch {
                rejection = error.description
            }
        }
        state = restored ?? workflow.makeInitialState()
        pendingChildSnapshots = snapshot?.children ?? []
        id = host.makeNodeID()
        super.init()
        host.register(self, id: id)
        if let rejection { host.observers?.forEach { $0.snapshotWasRejected(path: path, reason: rejection) } }
        if let observers = host.observers {
            let session = self.session
            for observer in observers {
                observer.sessionDidBegin(session)
                observer.workflowDidMakeInitialState(workflow, initialState: state, session: session)
            }
        }
    }

    /// The node's identity for workflow-swift-shaped observers.
    var session: WorkflowSession {
        if let cachedSession { return cachedSession }
        let session = WorkflowSession(
            workflowType: W.self, renderKey: key, sessionID: .init(host: host.incarnation, node: id), parent: parentSession)
        cachedSession = session
        return session
    }

    /// The parent node's session (`nil` for the root).
    var parentSession: WorkflowSession? { nil }

    /// The path of the node's parent (empty for the root); computed on demand, since building
    /// every node's full path eagerly costs O(depth) per node.
    var parentPath: String { "" }

    /// The node's path from the root: stable type names and keys, e.g. `/Root/Child[key]`.
    var path: String {
        if let cachedPath { return cachedPath }
        let name = identity.name
        var path = parentPath
        path.reserveCapacity(path.utf8.count + name.utf8.count + key.utf8.count + 3)
        path += "/"
        path += name
        if !key.isEmpty {
            path += "["
            path += key
            path += "]"
        }
        cachedPath = path
        return path
    }

    /// Reports `output` to the parent (the host, for the root).
    func emit(_ output: W.Output) {
        onOutput?(output)
    }

    /// Renders the node and, through it, its subtree.
    func render() -> W.Rendering {
        subtree?.beginPass()
        passes.begin(host.renderPass)
        isRendering = true
        let didRender = host.observers == nil ? nil : observeRender()
        let rendering = workflow.render(state: state, context: self)
        isRendering = false
        // Snapshots only apply to children rendered on the first pass after a restore.
        if !pendingChildSnapshots.isEmpty { pendingChildSnapshots = [] }
        subtree?.endPass()
        didRender?(rendering)
        host.observers?.forEach { $0.workflowDidRender(path: path) }
        return rendering
    }

    /// Takes new props from the parent's render pass.
    func update(workflow newWorkflow: W) {
        // A plain load and store, never an inout access (a swap): so every access to `workflow`
        // stays simple and the whole-module optimiser drops their run-time exclusivity checks.
        let previous = workflow
        workflow = newWorkflow
        newWorkflow.workflowDidChange(from: previous, state: &state)
        if let observers = host.observers {
            let session = self.session
            observers.forEach { $0.workflowDidChange(from: previous, to: newWorkflow, state: state, session: session) }
        }
    }

    /// Tells the observers a render begins; returns what to call with the rendering, if any
    /// observer asked (called in reverse order, so the first observer brackets the others).
    private func observeRender() -> ((W.Rendering) -> Void)? {
        let session = self.session
        // A loop, not `compactMap`: in this generic class it runs unspecialized (~2.5 k
        // instructions a call), and an observer rarely asks.
        var callbacks: [(W.Rendering) -> Void] = []
        for observer in host.observers ?? [] {
            if let callback = observer.workflowWillRender(workflow, state: state, session: session) { callbacks.append(callback) }
        }
        guard !callbacks.isEmpty else { return nil }
        return { rendering in
            for callback in callbacks.reversed() { callback(rendering) }
        }
    }

    /// Tells the observers `action` arrived and is about to be applied; returns what to call with
    /// the new state and output, if any observer asked (in reverse order, like `observeRender`).
    private func observeApply<A: WorkflowAction>(_ action: A) -> ((W.State, W.Output?) -> Void)? where A.WorkflowType == W {
        let session = self.session
        let observers = host.observers ?? []
        var callbacks: [(W.State, W.Output?) -> Void] = []
        for observer in observers {
            observer.workflowDidReceiveAction(action, workflow: workflow, session: session)
        }
        for observer in observers {
            if let callback = observer.workflowWillApplyAction(action, workflow: workflow, state: state, session: session) { callbacks.append(callback) }
        }
        guard !callbacks.isEmpty else { return nil }
        return { state, output in
            for callback in callbacks.reversed() { callback(state, output) }
        }
    }

    /// Applies `action`, then forwards any output up the tree (the cascade runs synchronously).
    func apply<A: WorkflowAction>(_ action: A) where A.WorkflowType == W {
        let didApply = host.observers == nil ? nil : observeApply(action)
        let context = takeApplyContext()
        defer { spareApplyContext = context }
        let output: W.Output?
        if host.options.renderOnlyIfStateChanged, W.State.self == Void.self {
            // A `Void` state cannot change (workflow-swift treats it as unchanged).
            output = action.apply(toState: &state, context: context)
        } else if host.options.renderOnlyIfStateChanged, let equal = equalityOfStates() {
            let before = state
            output = action.apply(toState: &state, context: context)
            if !equal(before, state) { host.needsRender = true }
        } else {
            output = action.apply(toState: &state, context: context)
            if !context.skipsRender { host.needsRender = true }
        }
        context.invalidate()
        didApply?(state, output)
        if let observers = host.observers {
            // The runtime's cached unqualified name: the text `String(describing:)` prints for a
            // type, without its reflection (~7 k instructions an action).
            let name = _typeName((action as? AnyWorkflowAction<W>)?.actionType ?? A.self, qualified: false)
            observers.forEach { $0.actionWasApplied(action: name, path: path, producedOutput: output != nil || context.hasEmittedOutputs) }
        }
        if context.hasEmittedOutputs {
            for emitted in context.emittedOutputs { emit(emitted) }
        }
        if let output { emit(output) }
    }

    /// `stateEquality`, worked out on first use.
    private func equalityOfStates() -> ((W.State, W.State) -> Bool)? {
        if !stateEqualityKnown {
            stateEquality = equality(of: W.State.self)
            stateEqualityKnown = true
        }
        return stateEquality
    }

    /// A valid context for the next action: the last one again if no action kept a reference to
    /// it (checked, so a context an action let escape stays invalid for good, as a fresh one per
    /// action would), otherwise a new one. Saves an allocation per applied action.
    private func takeApplyContext() -> RuntimeApplyContext<W> {
        if var spare = spareApplyContext.take(), isKnownUniquelyReferenced(&spare) {
            // Only `apply` stores it, and only a `RuntimeApplyContext<W>`.
            let context = unsafeDowncast(spare, to: RuntimeApplyContext<W>.self)
            context.renew(workflow: workflow)
            return context
        }
        return RuntimeApplyContext(workflow: workflow)
    }

    /// Applies the action the sink's own handler makes for `value`, whichever pass made it, as
    /// long as the latest pass declared a sink of the same kind again (and every pass since the
    /// handler's did): a sink the workflow stopped declaring is dropped, as in workflow-swift.
    func handleEvent(handler: AnySinkHandler, value: any Sendable) {
        guard passes.isCurrent(handler) else { return }
        // The registry found this node by the handler's node id, and only this node makes
        // handlers with that id: they are `SinkHandler<W>`s. A checked cast would look the
        // generic type up on every event.
        let handler = unsafeDowncast(handler, to: SinkHandler<W>.self)
        guard let action = handler.action(for: value) else { return }
        apply(action)
    }

    /// Ends the subtree's side effects and workers and makes the node's sinks no-ops.
    func tearDown() {
        subtree?.tearDown()
        host.unregister(id)
        if let observers = host.observers {
            let session = self.session
            observers.forEach { $0.sessionDidEnd(session) }
        }
    }

    /// The workflow's stable name and state version (`stableIdentity(of:)`).
    var identity: (name: String, version: Int) {
        if let cachedIdentity { return cachedIdentity }
        let identity = stableIdentity(of: W.self)
        cachedIdentity = identity
        return identity
    }

    /// The node's snapshot, including every live child's.
    func snapshot() -> TreeSnapshot {
        let identity = self.identity
        return TreeSnapshot(
            workflowType: identity.name, stateVersion: identity.version,
            state: StateCoding.encode(state), children: subtree?.childSnapshots() ?? [])
    }

    /// Appends this node and its subtree, in pre-order, to `nodes`.
    func collect(into nodes: inout [WorkflowTreeNode], depth: Int) {
        nodes.append(WorkflowTreeNode(path: path, workflowType: identity.name, key: key, depth: depth))
        subtree?.collectChildren(into: &nodes, depth: depth + 1)
    }

    /// The snapshot to restore a child of type `Child` and `key` from, if this pass has one.
    func pendingSnapshot<Child: Workflow>(of type: Child.Type, key: String) -> TreeSnapshot? {
        let pending = pendingChildSnapshots
        guard !pending.isEmpty else { return nil }
        let name = stableIdentity(of: Child.self).name
        return pending.first { $0.key == key && $0.snapshot.workflowType == name }?.snapshot
    }

    // MARK: - RenderContext

    private func checkValid(_ function: StaticString = #function) {
        precondition(
            isRendering,
            "RenderContext<\(W.self)>.\(function) was called after render(state:context:) returned. "
                + "A context is only valid during the render pass it was passed to.")
    }

    private var claimedSubtree: SubtreeManager<W> {
        if let subtree { return subtree }
        let created = SubtreeManager<W>()
        created.beginPass()
        subtree = created
        return created
    }

    override func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<W>
    ) -> Child.Rendering {
        checkValid()
        return claimedSubtree.render(workflow: workflow, key: key, outputMap: outputMap, parent: self)
    }

    override func render<Child: Workflow>(
        workflow: Child,
        key: String,
        passingOutputsTo passOutput: @escaping (Child.Output) -> Void
    ) -> Child.Rendering {
        checkValid()
        return claimedSubtree.render(workflow: workflow, key: key, outputMap: { _ in .noAction }, passOutput: passOutput, parent: self)
    }

    override func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == W {
        checkValid()
        let (slot, pass) = passes.nextSink()
        let handler = TypedSinkHandler(
            node: id, mailbox: host.mailbox, incarnation: host.incarnation, pass: pass, slot: slot, onEvent: onEvent)
        passes.declare(ObjectIdentifier(type(of: handler)))
        return Sink(handler: handler)
    }

    override package func sinkKind<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type, actionType: Action.Type
    ) -> ObjectIdentifier? where Action.WorkflowType == W {
        ObjectIdentifier(TypedSinkHandler<W, Event, Action>.self)
    }

    override package func keepSinks(ofKind kind: ObjectIdentifier) -> Bool {
        checkValid()
        passes.declare(kind)
        return true
    }

    override func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        checkValid()
        claimedSubtree.runSideEffect(key: key, action: action)
    }

    override var nodePath: String { path }
    override var loop: (any RuntimeLoop)? { host.loop }
}

/// A child node: reports its outputs through the parent's latest output map for it.
final class ChildNode<Child: Workflow, Parent: Workflow>: WorkflowNode<Child>, AnyChildNode {
    private unowned let parent: WorkflowNode<Parent>
    var outputMap: (Child.Output) -> AnyWorkflowAction<Parent>
    /// Where the outputs go instead of through `outputMap`, for a parent that renders this child
    /// with `render(workflow:key:passingOutputsTo:)`.
    var passOutput: ((Child.Output) -> Void)?

    init(
        workflow: Child, key: String, parent: WorkflowNode<Parent>, snapshot: TreeSnapshot?,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<Parent>
    ) {
        self.parent = parent
        self.outputMap = outputMap
        super.init(workflow: workflow, key: key, host: parent.host, snapshot: snapshot)
    }

    override var parentPath: String { parent.path }
    override var parentSession: WorkflowSession? { parent.session }

    override func emit(_ output: Child.Output) {
        if let passOutput { return passOutput(output) }
        parent.apply(outputMap(output))
    }
}
