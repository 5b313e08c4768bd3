import Testing
import Workflow

// The names and shapes workflow-swift code uses, beside the project's own: each one does what
// it does there.

/// A child that reports actions of `ActionParent` directly.
struct ActionReportingChild: Workflow, Sendable {
    typealias State = Void
    typealias Output = ActionParent.Action
    func render(state: Void, context: RenderContext<ActionReportingChild>) -> Sink<ActionParent.Action> {
        context.makeOutputSink()
    }
}

/// A child that reports plain numbers.
struct NumberChild: Workflow, Sendable {
    typealias State = Void
    typealias Output = Int
    func render(state: Void, context: RenderContext<NumberChild>) -> Sink<Int> {
        context.makeOutputSink()
    }
}

/// Renders both children in workflow-swift's shapes, and edits its state through a
/// `StateMutationSink`.
struct ActionParent: Workflow, Sendable {
    struct State: Equatable, Sendable {
        var total = 0
        var name = ""
    }

    typealias Output = String

    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = ActionParent
        case add(Int)
        func apply(toState state: inout State, context: ApplyContext<ActionParent>) -> String? {
            guard case .add(let amount) = self else { return nil }
            state.total += amount
            return nil
        }
    }

    struct Screen: Sendable {
        var state: State
        var actionChild: Sink<Action>
        var numberChild: Sink<Int>
        var edits: StateMutationSink<ActionParent>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<ActionParent>) -> Screen {
        Screen(
            state: state,
            actionChild: ActionReportingChild().rendered(in: context, key: "actions"),
            numberChild: AnyWorkflow(AnyWorkflow(NumberChild()))
                .onOutput { state, number in
                    state.total += number * 10
                    return number > 100 ? "big" : nil
                }
                .rendered(in: context, key: "numbers"),
            edits: context.makeStateMutationSink())
    }
}

/// Loads a number once with `context.run` (an `AsyncOperationWorker` keyed by the call site).
struct RunOnceWorkflow: Workflow, Sendable {
    typealias State = Int?

    enum Loaded: WorkflowAction, Sendable {
        typealias WorkflowType = RunOnceWorkflow
        case value(Int)
        func apply(toState state: inout Int?, context: ApplyContext<RunOnceWorkflow>) -> Never? {
            guard case .value(let value) = self else { return nil }
            state = value
            return nil
        }
    }

    func makeInitialState() -> Int? { nil }

    func render(state: Int?, context: RenderContext<RunOnceWorkflow>) -> Int? {
        if state == nil {
            context.run { Loaded.value(42) }
        }
        return state
    }
}

@Suite struct WorkflowSwiftAPITests {
    @Test func contextRunAppliesTheActionItsOperationReturns() async throws {
        let host = WorkflowHost(workflow: RunOnceWorkflow())
        try await rendering(of: host) { $0 == 42 }
        await host.stop()
    }

    @Test func anAsyncOperationWorkerIsEquivalentToAnyOther() {
        #expect(AsyncOperationWorker { 1 }.isEquivalent(to: AsyncOperationWorker { 2 }))
    }

    @Test func aClosureActionThatReadsOnlyStateAppliesAndReportsItsOutput() {
        let action = AnyWorkflowAction<ActionParent> { state in
            state.total += 2
            return "done"
        }
        var state = ActionParent.State()
        let context = ApplyContext.make(for: ActionParent())
        #expect(action.apply(toState: &state, context: context) == "done")
        #expect(state.total == 2)
        #expect(action.isClosureBased)
    }

    @Test func anErasedActionHandsBackItsBase() {
        let erased = AnyWorkflowAction(ActionParent.Action.add(3))
        #expect(!erased.isClosureBased)
        guard case .add(let amount)? = erased.base as? ActionParent.Action else {
            Issue.record("base is \(erased.base), not the wrapped action")
            return
        }
        #expect(amount == 3)
        // Erasing again keeps the same base.
        #expect((AnyWorkflowAction(erased).base as? ActionParent.Action) != nil)
        #expect(AnyWorkflowAction<ActionParent>(sendingOutput: "x").isClosureBased)
    }

    @Test func childOutputsThatAreActionsAndOnOutputMapsReachTheParent() async throws {
        let host = WorkflowHost(workflow: ActionParent())
        let outputs = host.outputs
        host.rendering.actionChild.send(.add(1))
        try await rendering(of: host) { $0.state.total == 1 }
        host.rendering.numberChild.send(2)
        try await rendering(of: host) { $0.state.total == 21 }
        host.rendering.numberChild.send(101)
        #expect(try await next(1, from: outputs) == ["big"], "onOutput's returned output goes to the parent's parent")
        try await rendering(of: host) { $0.state.total == 1031 }
        await host.stop()
    }

    @Test func aStateMutationSinkEditsTheState() async throws {
        let host = WorkflowHost(workflow: ActionParent())
        host.rendering.edits.send(\.name, value: "Ada")
        try await rendering(of: host) { $0.state.name == "Ada" }
        host.rendering.edits.send { $0.total = 7 }
        let edited = try await rendering(of: host) { $0.state.total == 7 }
        #expect(edited.state == ActionParent.State(total: 7, name: "Ada"))
        await host.stop()
    }

    @Test func anAnyWorkflowWrappedAgainKeepsItsIdentity() {
        let twice = AnyWorkflow(AnyWorkflow(NumberChild()))
        #expect(ObjectIdentifier(twice.workflowType) == ObjectIdentifier(NumberChild.self))
        #expect(twice.base is NumberChild)
    }
}
