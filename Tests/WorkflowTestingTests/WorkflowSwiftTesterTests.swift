import Testing
import Workflow
import WorkflowTesting

/// workflow-swift's tester names, under Swift Testing: they check what they say and report
/// failures as issues at the calling line.
@Suite("workflow-swift's tester names")
struct WorkflowSwiftTesterTests {
    @Test("verifyAction sees the action a child's output was mapped to, of its concrete type")
    func verifyActionOfAMappedOutput() {
        var seen: ParentWorkflow.Action?
        ParentWorkflow()
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "")
            .expect(worker: GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter", producingOutput: 4)
            .expectSideEffect(key: "refresh")
            .render()
            .verifyAction(type: ParentWorkflow.Action.self) { seen = $0 }
            .assert(action: ParentWorkflow.Action.bump(by: 4))
            .assertStateModifications { $0.count = 4 }
            .verifyOutput { #expect($0 == 4) }
        #expect(seen == .bump(by: 4))
    }

    @Test("an inline output map's action is seen as an AnyWorkflowAction")
    func verifyActionOfAnInlineMap() {
        var closureBased: Bool?
        ParentWorkflow()
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "", producingOutput: "hi")
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter")
            .expectSideEffect(key: "refresh")
            .render()
            .verifyAction(type: AnyWorkflowAction<ParentWorkflow>.self) { closureBased = $0.isClosureBased }
            .verifyState { #expect($0.leafOutput == "hi") }
        #expect(closureBased == true)
    }

    @Test("verifyAction of another type, verifyOutput without output and a wrong modification are issues")
    func failures() {
        let result = ParentWorkflow().renderTester().expectingEverything().render { $0.onBump.send(1) }
        withKnownIssue {
            result.verifyAction(type: ResetAction.self) { _ in Issue.record("must not run") }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Expected an action of type") }
        }
        withKnownIssue {
            ParentWorkflow().renderTester().expectingEverything().render().verifyOutput { _ in Issue.record("must not run") }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("No output was produced") }
        }
        let modifyingLine = #line + 2
        withKnownIssue {
            result.assertStateModifications { $0.count = 2 }
        } matching: { issue in
            issue.sourceLocation?.line == modifyingLine
                && issue.comments.contains { $0.rawValue.contains("expected modifications") }
        }
    }

    @Test("an action tester needs a workflow only for actions that read props")
    func actionTesterWithoutAWorkflow() {
        // LeafWorkflow has props, but this action reads none: it applies without a workflow.
        AnyWorkflowAction<LeafWorkflow>.tester(withState: ()).send(action: AnyWorkflowAction(sendingOutput: "x"))
            .assert(output: "x")
        // With a workflow, or for a workflow without props, actions apply too.
        AnyWorkflowAction<LeafWorkflow>.tester(withState: (), workflow: LeafWorkflow(label: "a"))
            .send(action: AnyWorkflowAction(sendingOutput: "x"))
            .assert(output: "x")
        AnyWorkflowAction<PropertylessWorkflow>.tester(withState: 1)
            .send(action: AnyWorkflowAction { state in
                state += 1
                return nil
            })
            .assert(state: 2)
            .assertStateModifications { $0 = 2 }
            .assertNoOutput()
    }
}

/// A workflow without stored properties, like most of workflow-swift's tutorial workflows.
struct PropertylessWorkflow: Workflow {
    typealias State = Int
    func makeInitialState() -> Int { 0 }
    func render(state: Int, context: RenderContext<PropertylessWorkflow>) -> Int { state }
}

/// Another action type of `ParentWorkflow`, which its render never produces.
enum ResetAction: WorkflowAction {
    typealias WorkflowType = ParentWorkflow
    case reset
    func apply(toState state: inout ParentWorkflow.State, context: ApplyContext<ParentWorkflow>) -> Int? {
        state = ParentWorkflow.State()
        return nil
    }
}
