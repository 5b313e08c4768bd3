import RemoteTestSupport
import Workflow
import WorkflowCluster
import WorkflowClusterCommands
import WorkflowRemote

// A coordinator for the durability tests: `workflow-coordinator`'s command line, hosting the
// root "durable-tally" (a local count and a remote counter placed by configuration), so a test
// can count exactly how often each accepted event took effect, on the root and on a worker
// (`remote-test-worker` hosts the counter).

/// A local count with a sink adding to it, beside a remote counter with its own sink.
struct DurableTallyWorkflow: Workflow, Sendable {
    typealias Output = Never

    struct Screen: Encodable, Sendable {
        var local: Int
        var add: Sink<Int>
        var remote: CounterScreen
    }

    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<DurableTallyWorkflow>) -> Screen {
        let remote = CounterWorkflow(step: 1, label: "remote").remote(on: .configured)
            .rendered(in: context, key: "remote", onOutput: { _, _ in nil })
        let add = context.makeSink(of: Int.self) { amount in
            AnyWorkflowAction<DurableTallyWorkflow> { count, _ in
                count += amount
                return nil
            }
        }
        return Screen(local: state, add: add, remote: remote)
    }
}

await WorkflowCoordinatorCommand.main(roots: RootWorkflowRegistry().registering("durable-tally") { DurableTallyWorkflow() })
