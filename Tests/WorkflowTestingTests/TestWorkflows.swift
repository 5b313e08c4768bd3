import Testing
import Workflow
import WorkflowTesting

/// A leaf child with `Void` rendering, for the tests' own parent workflows.
struct LeafWorkflow: Workflow {
    typealias State = Void
    typealias Output = String
    var label: String
    func render(state: Void, context: RenderContext<LeafWorkflow>) -> String { "leaf \(label)" }
}

/// A worker that would load a greeting; the tests never start it.
struct GreetingLoader: Worker, Equatable {
    typealias Rendering = Void
    typealias Output = String
    var name: String
    func run() async -> String { "Hello, \(name)" }
}

/// An asynchronous-sequence worker counting to `limit`; never started by the tests.
struct Counter: AsyncSequenceWorker, Equatable {
    typealias Rendering = Void
    typealias Output = Int
    var limit: Int
    func run() -> AsyncStream<Int> {
        AsyncStream { continuation in
            for value in 1...limit { continuation.yield(value) }
            continuation.finish()
        }
    }
}

/// Counts how often a side effect's closure ran, to prove the tester does not run it.
final class SideEffectProbe {
    var runs = 0
}

/// A parent exercising every declaration a render pass can make: an optional leaf child, a
/// worker, an async-sequence worker, a side effect and a sink.
struct ParentWorkflow: Workflow {
    var showLeaf: Bool = true
    var loaderName: String = "Ada"
    var probe = SideEffectProbe()

    struct State: Equatable {
        var greeting: String?
        var leafOutput: String?
        var count = 0
        var refreshed = false
    }

    enum Action: WorkflowAction, Equatable {
        typealias WorkflowType = ParentWorkflow
        case refresh
        case bump(by: Int)

        func apply(toState state: inout State, context: ApplyContext<ParentWorkflow>) -> Int? {
            switch self {
            case .refresh:
                state.refreshed = true
                return nil
            case .bump(let amount):
                state.count += amount
                return state.count
            }
        }
    }

    typealias Output = Int

    struct Screen {
        var leaf: String?
        var onBump: Sink<Int>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<ParentWorkflow>) -> Screen {
        let leaf = showLeaf
            ? LeafWorkflow(label: "one").rendered(in: context, key: "leaf", onOutput: { state, output in
                state.leafOutput = output
                return nil
            })
            : nil
        GreetingLoader(name: loaderName).running(in: context, key: "greeting", outputMap: { greeting in
            AnyWorkflowAction<ParentWorkflow> { state, _ in
                state.greeting = greeting
                return nil
            }
        })
        Counter(limit: 3).running(in: context, key: "counter", outputMap: { Action.bump(by: $0) })
        let probe = self.probe
        context.runSideEffect(key: "refresh") { _ in probe.runs += 1 }
        return Screen(leaf: leaf, onBump: context.makeSink(of: Action.self).contraMap { Action.bump(by: $0) })
    }
}

extension RenderTester where WorkflowType == ParentWorkflow {
    /// Every declaration `ParentWorkflow` makes by default, with no outputs or actions.
    func expectingEverything() -> RenderTester {
        expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "fake leaf")
            .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
            .expectWorker(Counter(limit: 3), key: "counter")
            .expectSideEffect(key: "refresh")
    }
}
