import Testing
import Workflow

// An output climbs the tree synchronously: child output → parent's output map → parent action →
// parent output → … → host.outputs, all before the one render pass that reflects it.

struct CascadeMiddleWorkflow: Workflow, Sendable {
    struct State: Sendable { var reports: [Int] = [] }
    typealias Output = String
    struct Screen: Sendable {
        var reports: [Int]
        var leaf: CounterScreen
    }

    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = CascadeMiddleWorkflow
        case leafReported(Int)
        func apply(toState state: inout State, context: ApplyContext<CascadeMiddleWorkflow>) -> String? {
            guard case .leafReported(let count) = self else { return nil }
            state.reports.append(count)
            return "middle saw \(count)"
        }
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<CascadeMiddleWorkflow>) -> Screen {
        let leaf = CounterWorkflow(reportEvery: 1).rendered(in: context, key: "leaf", outputMap: { Action.leafReported($0) })
        return Screen(reports: state.reports, leaf: leaf)
    }
}

struct CascadeRootWorkflow: Workflow, Sendable {
    struct State: Sendable { var reports: [String] = [] }
    typealias Output = String
    struct Screen: Sendable {
        var reports: [String]
        var middle: CascadeMiddleWorkflow.Screen
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<CascadeRootWorkflow>) -> Screen {
        let middle = CascadeMiddleWorkflow().rendered(in: context, key: "middle", onOutput: { state, report in
            state.reports.append(report)
            return "root saw \(report)"
        })
        return Screen(reports: state.reports, middle: middle)
    }
}

@Suite struct OutputCascadeTests {
    let root = rootPath(CascadeRootWorkflow.self)
    var middle: String { childPath(CascadeMiddleWorkflow.self, key: "middle", under: root) }
    var leaf: String { childPath(CounterWorkflow.self, key: "leaf", under: middle) }

    @Test func outputCascadesUpInOrderAndOneRenderPassReflectsIt() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: CascadeRootWorkflow(), observers: [observer])
        let outputs = host.outputs
        let eventsBefore = observer.events.count

        host.rendering.middle.leaf.onIncrement.send(())
        #expect(try await next(1, from: outputs) == ["root saw middle saw 1"])
        let screen = try await rendering(of: host) { $0.reports.count == 1 }
        _ = await host.treeDescription()  // a loop barrier: the drain job that rendered has finished

        #expect(screen.middle.leaf.count == 1)
        #expect(screen.middle.reports == [1])
        #expect(screen.reports == ["middle saw 1"])

        // The whole cascade is applied bottom-up, then exactly one render pass (children first).
        let cascade = observer.events.dropFirst(eventsBefore).map { event -> String in
            switch event {
            case .actionApplied(_, let path, let producedOutput): "apply \(path) output=\(producedOutput)"
            case .rendered(let path): "render \(path)"
            default: "\(event)"
            }
        }
        #expect(cascade == [
            "apply \(leaf) output=true",
            "apply \(middle) output=true",
            "apply \(root) output=true",
            "render \(leaf)",
            "render \(middle)",
            "render \(root)",
        ])
        await host.stop()
    }

    @Test func outputsArriveInTheOrderTheyWereProduced() async throws {
        let host = WorkflowHost(workflow: CascadeRootWorkflow())
        let outputs = host.outputs
        let leafSink = host.rendering.middle.leaf.onIncrement
        for _ in 1...20 { leafSink.send(()) }
        #expect(try await next(20, from: outputs) == (1...20).map { "root saw middle saw \($0)" })
        let screen = try await rendering(of: host) { $0.reports.count == 20 }
        #expect(screen.middle.reports == Array(1...20))
        await host.stop()
    }
}
