import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// Renders one remote ledger (the running build's type) on any worker.
struct LedgerHolder: Workflow, Sendable {
    typealias State = Void
    func render(state: Void, context: RenderContext<LedgerHolder>) -> LedgerScreen {
        LedgerWorkflow().remote(on: .anyWorker).rendered(in: context, key: "ledger")
    }
}

/// A remotable workflow that declares a stable name is known by it between processes: a worker
/// of another build, whose type of that name is another Swift type (a new state version), hosts
/// the children of the build before, and a snapshot of the old state version moves onto it.
@Suite struct StableRemoteNameTests {
    @Test("a worker registers a stably named type under its stable name; a later registration of the name replaces it")
    func registryUsesTheStableName() {
        #expect(RemotableRegistry().registering(LedgerWorkflow.self).typeNames == [LedgerWorkflow.stableTypeName])
        let next = RemotableRegistry().registering(LedgerWorkflow.self).registering(LedgerWorkflowNext.self)
        #expect(next.typeNames == [LedgerWorkflowNext.stableTypeName])
        #expect(RemotableRegistry().registering(CounterWorkflow.self).typeNames == [CounterWorkflow.workflowTypeName])
    }

    @Test("the next build's worker hosts the running build's child by its stable name, its version 1 state migrated")
    func nextBuildHostsTheChild() async throws {
        let parent = try makeParent("stable-name")
        let old = try makeWorker("stable-name-old", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: LedgerHolder(), loop: parent)
        let screen = try await rendering(of: host, "the ledger on the running build") { $0.stateVersion == 1 }
        for id in 1...3 { screen.record.send(id) }
        try await rendering(of: host, "three events applied") { $0.count == 3 }

        // The old worker leaves in order; the next build's worker takes the child with its state.
        let next = try makeWorker("stable-name-next", parent: parent.listenEndpoint!, registry: nextBuildTestRegistry)
        await parent.waitForWorkers(count: 2)
        _ = await old.drain(deadline: .seconds(30))
        await old.shutdown()
        let moved = try await rendering(of: host, "the ledger on the next build, its count kept") { $0.stateVersion == 2 && $0.count == 3 }
        // The parent's snapshot of a child is the one its worker sends with an acknowledgement.
        moved.record.send(4)
        try await rendering(of: host, "the event after the move applied") { $0.count == 4 }
        let snapshot = await host.snapshot()
        await host.stop()
        await next.shutdown()
        await parent.shutdown()

        // The parent's snapshot holds the child's migrated state: the ids, and the new field's
        // migrated value.
        let node = try #require(snapshot.children.first?.snapshot.state)
        struct RemoteNodeState: Decodable { var snapshot: TreeSnapshot? }
        let child = try #require(try JSONDecoder().decode(RemoteNodeState.self, from: node).snapshot)
        #expect(child.workflowType == LedgerWorkflowNext.stableTypeName && child.stateVersion == 2)
        let state = try JSONDecoder().decode(LedgerWorkflowNext.State.self, from: try #require(child.state))
        #expect(state.ids == [1, 2, 3, 4] && state.createdByStateVersion == 1, "\(state)")
    }
}
