import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Workflow
import WorkflowCluster
import WorkflowClusterCommands
import WorkflowClusterTesting
import WorkflowRemote

// The daemons of the durability tests: `workflow-coordinator`'s command line hosting the root
// "event-ledger", or, with DURABILITY_TEST_ROLE=worker, `workflow-worker`'s hosting its remote
// child. Both record the id of every event they apply, in order, so a test can tell exactly
// which accepted events took effect, and how often, across coordinator SIGKILLs. The root
// "tally" (a count, no remote child) is for measuring accepted events per second. With
// DURABILITY_TEST_STORE_SCHEMA=next the coordinator plays the next release of the store's
// schema (`NextReleaseSchema`).

/// A remote child recording each event's id.
struct EventLedgerWorkflow: RemotableWorkflow, Equatable {
    typealias Output = Never

    struct State: Codable, Equatable, Sendable {
        var ids: [Int] = []
    }

    struct Screen: Codable, Sendable {
        /// `false` in the placeholder (the worker has not rendered the child yet).
        var available: Bool
        var ids: [Int]
        var record: Sink<Int>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<EventLedgerWorkflow>) -> Screen {
        Screen(
            available: true, ids: state.ids,
            record: context.makeSink(of: Int.self) { id in
                AnyWorkflowAction<EventLedgerWorkflow> { state, _ in
                    state.ids.append(id)
                    return nil
                }
            })
    }

    func placeholderRendering() -> Screen {
        Screen(available: false, ids: [], record: .inert)
    }
}

/// The root: its own ledger beside the remote one.
struct RootLedgerWorkflow: Workflow, Sendable {
    typealias Output = Never

    struct Screen: Encodable, Sendable {
        var ids: [Int]
        var record: Sink<Int>
        var remote: EventLedgerWorkflow.Screen
    }

    func makeInitialState() -> [Int] { [] }

    func render(state: [Int], context: RenderContext<RootLedgerWorkflow>) -> Screen {
        let remote = EventLedgerWorkflow().remote(on: .configured).rendered(in: context, key: "remote")
        let record = context.makeSink(of: Int.self) { id in
            AnyWorkflowAction<RootLedgerWorkflow> { ids, _ in
                ids.append(id)
                return nil
            }
        }
        return Screen(ids: state, record: record, remote: remote)
    }
}

// Dies with the test process, even one that crashed before its cleanup.
ParentWatch.exitWhenOrphaned()
if ProcessInfo.processInfo.environment["DURABILITY_TEST_ROLE"] == "worker" {
    await WorkflowWorkerCommand.main(hosting: RemotableRegistry().registering(EventLedgerWorkflow.self))
} else {
    // The next release's store schema, for the coordinators' rolling-upgrade test.
    let next = ProcessInfo.processInfo.environment["DURABILITY_TEST_STORE_SCHEMA"] == "next"
    await WorkflowCoordinatorCommand.main(
        roots: RootWorkflowRegistry().registering("event-ledger") { RootLedgerWorkflow() }.registering("tally") { TallyWorkflow() },
        storeSchema: next ? NextReleaseSchema.schema : .thisRelease)
}
