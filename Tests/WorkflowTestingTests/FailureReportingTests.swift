import Testing
import Workflow
import WorkflowTesting

/// Each test makes the tester fail on purpose and checks that it recorded an issue saying why.
@Suite("RenderTester and WorkflowActionTester report failures")
struct FailureReportingTests {
    @Test("an expected child that is not rendered is an issue")
    func missingExpectedChild() {
        withKnownIssue {
            ParentWorkflow(showLeaf: false)
                .renderTester()
                .expectingEverything()
                .render()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Expected child workflow") && $0.rawValue.contains("LeafWorkflow") }
        }
    }

    @Test("an unexpected child is an issue naming its type and key, and the render still completes")
    func unexpectedChild() {
        var leaf: String?
        withKnownIssue {
            ParentWorkflow()
                .renderTester()
                .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
                .expectWorker(Counter(limit: 3), key: "counter")
                .expectSideEffect(key: "refresh")
                .render { leaf = $0.leaf }
        } matching: { issue in
            issue.comments.contains {
                $0.rawValue.contains("unexpected Workflow of type") && $0.rawValue.contains("LeafWorkflow")
                    && $0.rawValue.contains("\"leaf\"")
            }
        }
        // The unexpected child was rendered inertly, so the parent still got a real rendering.
        #expect(leaf == "leaf one")
    }

    @Test("a wrong state assertion is an issue pointing at the asserting line")
    func wrongState() {
        let tester = TicTacToeWorkflow.Action.tester(withState: TicTacToeWorkflow.State()).send(action: .tap(index: 0))
        let assertingLine = #line + 2
        withKnownIssue {
            tester.assert(state: TicTacToeWorkflow.State())
        } matching: { issue in
            issue.sourceLocation?.line == assertingLine
                && issue.comments.contains { $0.rawValue.contains("State (First) does not match the expected state (Second)") }
        }
        withKnownIssue {
            ParentWorkflow()
                .renderTester()
                .expectingEverything()
                .render { $0.onBump.send(1) }
                .assert(state: ParentWorkflow.State(count: 2))
        }
    }

    @Test("a worker that is not equivalent to the expected one is an issue")
    func nonEquivalentWorker() {
        withKnownIssue {
            ParentWorkflow(loaderName: "Grace")
                .renderTester()
                .expectingEverything()
                .render()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("not equivalent") || $0.rawValue.contains("was not run") }
        }
    }

    @Test("an undeclared expected side effect is an issue, and so is an unexpected one")
    func sideEffects() {
        withKnownIssue {
            LeafWorkflow(label: "x").renderTester().expectSideEffect(key: "never").render()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Expected side-effect with key: \"never\"") }
        }
        withKnownIssue {
            ParentWorkflow()
                .renderTester()
                .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "")
                .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
                .expectWorker(Counter(limit: 3), key: "counter")
                .render()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Unexpected side-effect with key \"refresh\"") }
        }
    }

    @Test("more than one action in a pass is an issue, and each is applied in order")
    func moreThanOneAction() {
        var result: RenderTesterResult<ParentWorkflow>?
        withKnownIssue {
            result = ParentWorkflow()
                .renderTester()
                .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "")
                .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
                .expectWorker(Counter(limit: 3), key: "counter")
                .expectSideEffect(key: "refresh", producingAction: ParentWorkflow.Action.refresh)
                .render { $0.onBump.send(1) }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Received multiple actions in a single render test") }
        }
        // The side effect's action first, then the sink's: both applied, the result holds the last.
        #expect(result?.state == ParentWorkflow.State(count: 1, refreshed: true))
        result?.assert(action: ParentWorkflow.Action.bump(by: 1))
    }

    @Test("a mismatched action or output is an issue")
    func wrongActionAndOutput() {
        withKnownIssue {
            ParentWorkflow()
                .renderTester()
                .expectingEverything()
                .render { $0.onBump.send(1) }
                .assert(action: ParentWorkflow.Action.refresh)
                .assert(output: 2)
                .assertNoAction()
        } matching: { issue in
            issue.comments.contains {
                $0.rawValue.contains("Action (First) does not match the expected action (Second)")
                    || $0.rawValue.contains("Output (First) does not match the expected output (Second)")
                    || $0.rawValue.contains("Expected no action, but got bump(by: 1)")
            }
        }
    }
}

/// A workflow that renders the same child key twice, which the runtime forbids.
private struct DuplicatingWorkflow: Workflow {
    typealias State = Void
    func render(state: Void, context: RenderContext<DuplicatingWorkflow>) -> [String] {
        [LeafWorkflow(label: "a").rendered(in: context, key: "same", onOutput: { _, _ in nil }),
         LeafWorkflow(label: "b").rendered(in: context, key: "same", onOutput: { _, _ in nil })]
    }
}

@Test("a child key rendered twice in one pass is an issue")
func duplicateChildKey() {
    withKnownIssue {
        DuplicatingWorkflow()
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "same", producingRendering: "x")
            .render()
    } matching: { issue in
        issue.comments.contains { $0.rawValue.contains("Multiple Workflows of type") && $0.rawValue.contains("LeafWorkflow") }
    }
}
