/// A hook into a host's life for logging, tracing and metrics.
///
/// Every method has an empty default, so an observer implements only what it needs. Callbacks run
/// on the host's loop, synchronously: keep them cheap. A host without observers skips the calls
/// entirely.
public protocol WorkflowObserver: Sendable {
    /// The host started with `root` (its stable type name).
    func sessionDidBegin(root: String)
    /// The host stopped; no callback follows.
    func sessionDidEnd()
    /// A workflow at `path` rendered (called once per node per pass).
    func workflowDidRender(path: String)
    /// An action of type `action` was applied to the workflow at `path`.
    func actionWasApplied(action: String, path: String, producedOutput: Bool)
    /// A snapshot could not be used to restore the workflow at `path`; it started fresh.
    func snapshotWasRejected(path: String, reason: String)
    /// A rendering was published, `duration` after its render pass began (including the passes
    /// and the waits for remote children it took to settle): the render time a user sees.
    func renderingWasPublished(after duration: Duration)

    // workflow-swift's requirements, so observers written for it work here unchanged (they are
    // called for every node, with the workflow, state and action values themselves).

    /// A node began: a parent rendered this type and key for the first time (or a host started).
    func sessionDidBegin(_ session: WorkflowSession)
    /// A node ended: a pass no longer rendered it, or its host stopped.
    func sessionDidEnd(_ session: WorkflowSession)
    /// A new node's workflow made (or restored) its first state.
    func workflowDidMakeInitialState<WorkflowType: Workflow>(
        _ workflow: WorkflowType, initialState: WorkflowType.State, session: WorkflowSession)
    /// A node is about to render; the closure returned, if any, is called with the rendering.
    func workflowWillRender<WorkflowType: Workflow>(
        _ workflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession
    ) -> ((WorkflowType.Rendering) -> Void)?
    /// A parent rendered a node again with new props; `state` is after `workflowDidChange`.
    func workflowDidChange<WorkflowType: Workflow>(
        from oldWorkflow: WorkflowType, to newWorkflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession)
    /// An action reached a node (from a sink, a child's output or a worker), before it is applied.
    func workflowDidReceiveAction<Action: WorkflowAction>(
        _ action: Action, workflow: Action.WorkflowType, session: WorkflowSession)
    /// An action is about to be applied; the closure returned, if any, is called with the new
    /// state and the output, before the output goes to the parent.
    func workflowWillApplyAction<Action: WorkflowAction>(
        _ action: Action, workflow: Action.WorkflowType, state: Action.WorkflowType.State, session: WorkflowSession
    ) -> ((Action.WorkflowType.State, Action.WorkflowType.Output?) -> Void)?
}

extension WorkflowObserver {
    public func sessionDidBegin(root: String) {}
    public func sessionDidEnd() {}
    public func workflowDidRender(path: String) {}
    public func actionWasApplied(action: String, path: String, producedOutput: Bool) {}
    public func snapshotWasRejected(path: String, reason: String) {}
    public func renderingWasPublished(after duration: Duration) {}
}

extension WorkflowObserver {
    public func sessionDidBegin(_ session: WorkflowSession) {}
    public func sessionDidEnd(_ session: WorkflowSession) {}
    public func workflowDidMakeInitialState<WorkflowType: Workflow>(
        _ workflow: WorkflowType, initialState: WorkflowType.State, session: WorkflowSession
    ) {}
    public func workflowWillRender<WorkflowType: Workflow>(
        _ workflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession
    ) -> ((WorkflowType.Rendering) -> Void)? { nil }
    public func workflowDidChange<WorkflowType: Workflow>(
        from oldWorkflow: WorkflowType, to newWorkflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession
    ) {}
    public func workflowDidReceiveAction<Action: WorkflowAction>(
        _ action: Action, workflow: Action.WorkflowType, session: WorkflowSession
    ) {}
    public func workflowWillApplyAction<Action: WorkflowAction>(
        _ action: Action, workflow: Action.WorkflowType, state: Action.WorkflowType.State, session: WorkflowSession
    ) -> ((Action.WorkflowType.State, Action.WorkflowType.Output?) -> Void)? { nil }
}
