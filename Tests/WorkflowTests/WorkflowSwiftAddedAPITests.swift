import Synchronization
import Testing
@_spi(WorkflowGlobalObservation) import Workflow

// workflow-swift API that code written for it uses and that this package lacked: each does what
// it does there.

/// A child that reports nothing.
struct SilentChild: Workflow, Sendable {
    typealias State = Void
    func render(state: Void, context: RenderContext<SilentChild>) -> String { "silent" }
}

/// Renders a counter through an `AnyWorkflow` used as a workflow of its own (what
/// `ignoringOutput()` on an erased value makes, as in workflow-swift), and a silent child whose
/// output type was declared with `mapOutput(to:)`.
struct ErasedChildParent: Workflow, Sendable {
    typealias State = Void
    typealias Output = String
    struct Screen: Sendable {
        var counter: CounterScreen
        var silent: String
    }

    func render(state: Void, context: RenderContext<ErasedChildParent>) -> Screen {
        let erased: AnyWorkflow<CounterScreen, Int> = AnyWorkflow(CounterWorkflow(label: "erased"))
        let counter = erased.ignoringOutput().rendered(in: context, key: "counter")
        let declared: AnyWorkflow<String, String> = SilentChild().mapOutput(to: String.self)
        let silent = declared.rendered(in: context, key: "silent", onOutput: { _, output in output })
        return Screen(counter: counter, silent: silent)
    }
}

@Suite struct WorkflowSwiftAddedAPITests {
    @Test("mapOutput(to:) gives a child without output the output type its parent expects")
    func mapOutputToType() async throws {
        let host = WorkflowHost(workflow: ErasedChildParent())
        #expect(host.rendering.silent == "silent")
        let tree = await host.liveTree()
        let silentNodes = tree.filter { $0.workflowType == SilentChild.workflowTypeName && $0.key == "silent" }
        #expect(silentNodes.count == 1, "mapping the output type keeps the child's identity")
        await host.stop()
    }

    @Test("an AnyWorkflow is a Workflow: used as one, it is a node rendering the wrapped workflow beneath it")
    func anyWorkflowIsAWorkflow() async throws {
        let host = WorkflowHost(workflow: ErasedChildParent())
        #expect(host.rendering.counter.label == "erased")
        host.rendering.counter.onIncrement.send(())
        let screen = try await rendering(of: host) { $0.counter.count == 1 }
        #expect(screen.counter.label == "erased", "events reach the wrapped workflow through the erased node")

        let tree = await host.liveTree()
        let erasedNode = try #require(tree.first { $0.key == "counter" })
        #expect(erasedNode.workflowType == AnyWorkflow<CounterScreen, Int>.workflowTypeName)
        #expect(tree.contains { $0.workflowType == CounterWorkflow.workflowTypeName && $0.depth == erasedNode.depth + 1 })
        await host.stop()
    }

    @Test("erasing an erased workflow adds no level: AnyWorkflow(AnyWorkflow(x)) is x's identity")
    func erasingTwice() {
        let once = AnyWorkflow(CounterWorkflow())
        let twice = AnyWorkflow(once)
        #expect(ObjectIdentifier(twice.workflowType) == ObjectIdentifier(CounterWorkflow.self))
        #expect(ObjectIdentifier(once.asAnyWorkflow().workflowType) == ObjectIdentifier(CounterWorkflow.self))
    }

    @Test("a shared observers interceptor decides the observers of every host created after it is set")
    func sharedObserversInterceptor() async throws {
        let marker = MarkerObserver()
        let recorder = RecordingObserver()
        // Other tests create hosts meanwhile: the interceptor changes only hosts carrying the marker.
        WorkflowObservation.sharedObserversInterceptor = AddingInterceptor(marker: marker, added: recorder)
        defer { WorkflowObservation.sharedObserversInterceptor = nil }

        let host = WorkflowHost(workflow: CounterWorkflow(), observers: [marker])
        host.rendering.onIncrement.send(())
        try await rendering(of: host) { $0.count == 1 }
        await host.stop()
        #expect(recorder.renderCount(of: rootPath(CounterWorkflow.self)) >= 2, "the added observer saw both passes")

        WorkflowObservation.sharedObserversInterceptor = nil
        let unchanged = RecordingObserver()
        let plain = WorkflowHost(workflow: CounterWorkflow(), observers: [marker, unchanged])
        await plain.stop()
        #expect(recorder.renderCount(of: rootPath(CounterWorkflow.self)) >= 2)
        #expect(unchanged.renderCount(of: rootPath(CounterWorkflow.self)) == 1, "nil restored the default: a host keeps its own")
    }
}

/// Marks the hosts `AddingInterceptor` changes.
final class MarkerObserver: WorkflowObserver {}

/// Adds `added` to the observers of hosts created with `marker`.
struct AddingInterceptor: ObserversInterceptor {
    let marker: MarkerObserver
    let added: RecordingObserver

    func workflowObservers(for initialObservers: [any WorkflowObserver]) -> [any WorkflowObserver] {
        initialObservers.contains { $0 as? MarkerObserver === marker } ? initialObservers + [added] : initialObservers
    }
}
