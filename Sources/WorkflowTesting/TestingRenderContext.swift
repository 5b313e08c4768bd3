@_spi(WorkflowRuntime) import Workflow

/// The render context a `RenderTester` hands the workflow under test for its one render pass.
///
/// Instead of creating child nodes, starting side effects and routing sinks through a host, it
/// answers children from expectations, records which children, workers and side effects the
/// pass declared (so missing, unexpected and duplicate ones become test failures), and collects
/// the actions the pass would cause so the tester can apply them afterwards, exactly once.
final class TestingRenderContext<WorkflowType: Workflow>: RenderContext<WorkflowType> {
    /// Child expectations not yet matched by a rendered child.
    private var pendingWorkflows: [ExpectedWorkflow]
    /// Worker expectations not yet matched by a rendered worker.
    private var pendingWorkers: [ExpectedWorker]
    /// Side-effect expectations not yet matched by a declared side effect.
    private var pendingSideEffects: [ExpectedSideEffect<WorkflowType>]

    /// The children (including workers) rendered so far: type plus key.
    private var renderedChildren: Set<ChildIdentity> = []
    /// The side-effect keys declared so far.
    private var declaredSideEffects: Set<AnyHashable> = []
    /// Actions caused by expected outputs and side effects, in the order they were declared.
    private var expectationActions: [TestedAction<WorkflowType>] = []
    /// Turns a recorded sink event into an action; indexed by `SinkEventRecorder.Event.handler`.
    private var sinkHandlers: [(any Sendable) -> TestedAction<WorkflowType>?] = []
    /// Where the sinks handed out by this pass deliver.
    private let recorder = SinkEventRecorder()
    /// The tester's `render` call, where failures not tied to an expectation point.
    private let location: FailureLocation
    /// False once the render pass returned: a context is only valid during its pass.
    private var isValid = true

    init(
        workflows: [ExpectedWorkflow],
        workers: [ExpectedWorker],
        sideEffects: [ExpectedSideEffect<WorkflowType>],
        location: FailureLocation
    ) {
        pendingWorkflows = workflows
        pendingWorkers = workers
        pendingSideEffects = sideEffects
        self.location = location
        super.init()
    }

    // MARK: RenderContext

    override func render<Child: Workflow>(
        workflow: Child,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<WorkflowType>
    ) -> Child.Rendering {
        guard checkValid("render a child") else { return renderInertly(workflow) }
        let isFirstOfItsKind = renderedChildren.insert(ChildIdentity(type: ObjectIdentifier(Child.self), key: key)).inserted
        if !isFirstOfItsKind {
            recordFailure(
                "Multiple Workflows of type \(childTypeName(Child.self)) with key \"\(key)\" used in the same render call. "
                    + "Use a unique key to render multiple Workflows of the same type. (Rendered by \(WorkflowType.self).)",
                at: location)
        }
        if let worker = workflow as? any WorkerRendering {
            matchWorker(worker.wrappedWorker, childType: Child.self, key: key, reportUnexpected: isFirstOfItsKind, outputMap: outputMap)
            // A worker's rendering is `Void`; rendering it inertly produces it without starting it.
            return renderInertly(workflow)
        }
        guard let index = pendingWorkflows.firstIndex(where: { $0.matches(Child.self, key: key) }) else {
            if isFirstOfItsKind {
                recordFailure(
                    "Attempted to render unexpected Workflow of type \(childTypeName(Child.self)) with key \"\(key)\". "
                        + "\(unexpectedChildHint(Child.self, key: key)) (Rendered by \(WorkflowType.self).)",
                    at: location)
            }
            return renderInertly(workflow)
        }
        let expectation = pendingWorkflows.remove(at: index)
        expectation.assertions(workflow)
        if let output = expectation.output as? Child.Output {
            expectationActions.append(TestedAction(outputMap(output), origin: "output of child \(expectation.description)"))
        }
        guard let rendering = expectation.rendering as? Child.Rendering else {
            // Unreachable: `expectWorkflow` ties the rendering's type to the child type.
            recordFailure("The rendering expected for \(expectation.description) has the wrong type.", at: location)
            return renderInertly(workflow)
        }
        return rendering
    }

    override func makeSink<Event: Sendable, Action: WorkflowAction>(
        of eventType: Event.Type,
        onEvent: @escaping (Event) -> Action
    ) -> Sink<Event> where Action.WorkflowType == WorkflowType {
        guard checkValid("make a sink") else { return Sink { _ in } }
        let handler = sinkHandlers.count
        sinkHandlers.append { value in
            guard let event = value as? Event else { return nil }
            return TestedAction(onEvent(event), origin: "sink of \(ValueDump.typeName(Event.self))")
        }
        let recorder = self.recorder
        return Sink { event in recorder.record(handler: handler, value: event) }
    }

    override func runSideEffect(key: AnyHashable, action: (Lifetime) -> Void) {
        guard checkValid("run a side effect") else { return }
        guard declaredSideEffects.insert(key).inserted else {
            recordFailure(
                "Multiple side-effects with key \(describeKey(key)) declared by \(WorkflowType.self) in the same render pass.",
                at: location)
            return
        }
        guard let index = pendingSideEffects.firstIndex(where: { $0.key == key }) else {
            recordFailure(
                "Unexpected side-effect with key \(describeKey(key)) (declared by \(WorkflowType.self)). "
                    + "If it is expected, declare it with expectSideEffect(key:producingAction:).",
                at: location)
            return
        }
        // The side effect's closure is deliberately not run: it would start real work.
        if let tested = pendingSideEffects.remove(at: index).action {
            expectationActions.append(tested)
        }
    }

    // MARK: Tester

    /// Ends the pass: later uses of the context are failures, unmatched expectations are reported.
    func finishRender() {
        isValid = false
        for expectation in pendingWorkflows {
            recordFailure(
                "Expected child workflow of type: \(childTypeName(expectation.workflowType)), key: \"\(expectation.key)\"; "
                    + "\(WorkflowType.self) did not render it.",
                at: expectation.location)
        }
        for expectation in pendingWorkers {
            recordFailure(
                "Expected child workflow of type: \(workerWorkflowName(expectation.workerType)), key: \"\(expectation.key)\"; "
                    + "\(WorkflowType.self) did not run the worker \(expectation.workerDescription).",
                at: expectation.location)
        }
        for expectation in pendingSideEffects {
            recordFailure(
                "Expected side-effect with key: \(describeKey(expectation.key)); \(WorkflowType.self) did not declare it.",
                at: expectation.location)
        }
        pendingWorkflows = []
        pendingWorkers = []
        pendingSideEffects = []
    }

    /// Every action the pass caused: expected outputs and side effects first, then sink events in
    /// the order they were sent. Closes the sinks.
    func collectActions() -> [TestedAction<WorkflowType>] {
        let sinkActions = recorder.close().compactMap { event in sinkHandlers[event.handler](event.value) }
        return expectationActions + sinkActions
    }

    // MARK: Private

    /// What to do about an unexpected child: the expectations it nearly matched, or how to declare it.
    private func unexpectedChildHint(_ type: any Workflow.Type, key: String) -> String {
        let sameType = pendingWorkflows.filter { ObjectIdentifier($0.workflowType) == ObjectIdentifier(type) }.map(\.key)
        let sameKey = pendingWorkflows.filter { $0.key == key }.map { childTypeName($0.workflowType) }
        if !sameType.isEmpty {
            return "Expecting key \(sameType.map { "\"\($0)\"" }.joined(separator: " or "))."
        }
        if !sameKey.isEmpty {
            return "Found expectation of type \(sameKey.joined(separator: ", ")) for key \"\(key)\"."
        }
        return "If this child Workflow is expected, please add a call to `expectWorkflow(...)` with the appropriate parameters "
            + "before invoking `render()`."
    }

    private func checkValid(_ what: String) -> Bool {
        if !isValid {
            recordFailure(
                "\(WorkflowType.self) tried to \(what) after render(state:context:) returned; "
                    + "a context is only valid during its render pass.",
                at: location)
        }
        return isValid
    }

    /// Matches a rendered worker against the expected ones of its type and key (as workflow-swift
    /// matches the workflow a worker runs in): an expected worker that is not equivalent is one
    /// failure naming both, and still stands in for the rendered one (its output is applied).
    private func matchWorker<Output>(
        _ worker: any Sendable,
        childType: any Workflow.Type,
        key: String,
        reportUnexpected: Bool,
        outputMap: @escaping (Output) -> AnyWorkflowAction<WorkflowType>
    ) {
        let sameKind = pendingWorkers.indices.filter {
            pendingWorkers[$0].key == key && pendingWorkers[$0].workerType == type(of: worker)
        }
        guard let index = sameKind.first(where: { pendingWorkers[$0].isEquivalent(worker) }) ?? sameKind.first else {
            if reportUnexpected {
                recordFailure(
                    "Attempted to render unexpected Workflow of type \(childTypeName(childType)) with key \"\(key)\". "
                        + "If this worker is expected, please add a call to `expectWorker(...)` with the appropriate parameters "
                        + "before invoking `render()`. (The worker \(worker), run by \(WorkflowType.self).)",
                    at: location)
            }
            return
        }
        let expectation = pendingWorkers.remove(at: index)
        if !expectation.isEquivalent(worker) {
            recordFailure(
                "Workers of type \(String(describing: type(of: worker))) not equivalent. "
                    + "Expected: \(expectation.workerDescription). Got: \(worker) (key \"\(key)\", run by \(WorkflowType.self)).",
                at: expectation.location)
        }
        if let output = expectation.output as? Output {
            expectationActions.append(TestedAction(outputMap(output), origin: "output of \(expectation.description)"))
        }
    }
}

/// A child's identity within its parent's pass, as the runtime defines it: concrete type plus key.
private struct ChildIdentity: Hashable {
    let type: ObjectIdentifier
    let key: String
}
