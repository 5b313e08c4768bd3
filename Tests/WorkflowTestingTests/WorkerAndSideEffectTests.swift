import Testing
import Workflow
import WorkflowTesting

@Suite("RenderTester workers, side effects and actions")
struct WorkerAndSideEffectTests {
    @Test("an expected worker's output is mapped through the parent and applied")
    func workerOutputIsApplied() {
        ParentWorkflow()
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "fake leaf")
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting", producingOutput: "Hi Ada")
            .expectWorker(Counter(limit: 3), key: "counter")
            .expectSideEffect(key: "refresh")
            .render { screen in #expect(screen.leaf == "fake leaf") }
            .assert(state: ParentWorkflow.State(greeting: "Hi Ada"))
            .assertNoOutput()
    }

    @Test("an async-sequence worker's element is mapped to the parent's action")
    func asyncSequenceWorkerOutputIsApplied() {
        ParentWorkflow()
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "fake leaf")
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter", producingOutput: 2)
            .expectSideEffect(key: "refresh")
            .render()
            .assert(state: ParentWorkflow.State(count: 2))
            .assert(output: 2)
    }

    @Test("an expected child's output is applied through the parent's output map")
    func childOutputIsApplied() {
        ParentWorkflow()
            .renderTester()
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter")
            .expectSideEffect(key: "refresh")
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "fake", producingOutput: "done") {
                #expect($0.label == "one")
            }
            .render()
            .assert { #expect($0.leafOutput == "done") }
    }

    @Test("a side effect is checked but not run, and its action is applied")
    func sideEffectActionIsAppliedWithoutRunning() {
        let workflow = ParentWorkflow()
        workflow
            .renderTester()
            .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "fake leaf")
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter")
            .expectSideEffect(key: "refresh", producingAction: ParentWorkflow.Action.refresh)
            .render()
            .assert(action: ParentWorkflow.Action.refresh)
            .assert(state: ParentWorkflow.State(refreshed: true))
        #expect(workflow.probe.runs == 0)
    }

    @Test("a sink's action is compared by assert(action:)")
    func sinkActionIsComparable() {
        let result = ParentWorkflow()
            .renderTester(initialState: ParentWorkflow.State(count: 10))
            .expectingEverything()
            .render { $0.onBump.send(5) }
            .assert(action: ParentWorkflow.Action.bump(by: 5))
            .assert(output: 15)
        #expect(result.state.count == 15)
        #expect(result.output == 15)
    }

    @Test("a pass with nothing sent applies no action")
    func noActionWithoutEvents() {
        ParentWorkflow()
            .renderTester()
            .expectingEverything()
            .render()
            .assertNoAction()
            .assertNoOutput()
            .assert(state: ParentWorkflow.State())
    }
}
