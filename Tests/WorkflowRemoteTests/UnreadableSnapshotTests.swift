import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// Renders one remote counter on any worker.
struct CounterHolder: Workflow, Sendable {
    typealias State = Void
    func render(state: Void, context: RenderContext<CounterHolder>) -> CounterScreen {
        CounterWorkflow(step: 1, label: "held").remote(on: .anyWorker).rendered(in: context, key: "c", onOutput: { _, _ in nil })
    }
}

/// A remote child restored from a snapshot no worker can read is not started afresh: it is
/// unavailable with a typed reason, its snapshot kept. A snapshot of a newer state version than
/// any worker announces is not even sent to one (the parent waits for a worker that reads it);
/// one a worker refuses (an older version with no migration) is reported with the worker's reason.
@Suite struct UnreadableSnapshotTests {
    /// `snapshot` with the remote counter's own snapshot marked as written by state version
    /// `version`.
    static func written(byStateVersion version: Int, _ snapshot: TreeSnapshot) throws -> TreeSnapshot {
        var copy = snapshot
        for index in copy.children.indices {
            copy.children[index].snapshot = try written(byStateVersion: version, copy.children[index].snapshot)
        }
        // A remote child's node (`Remote<Type>`) keeps the child's own snapshot in its state.
        guard copy.workflowType.hasPrefix("Remote<"), let state = copy.state,
            var object = try JSONSerialization.jsonObject(with: state) as? [String: Any],
            var child = object["snapshot"] as? [String: Any]
        else { return copy }
        child["stateVersion"] = version
        object["snapshot"] = child
        copy.state = try JSONSerialization.data(withJSONObject: object)
        return copy
    }

    /// Runs a counter to 3 on a worker, then restores a host from its snapshot marked as written
    /// by `stateVersion`, and returns the restored child's first unavailable status.
    static func restoredStatus(stateVersion: Int, name: String) async throws -> RemoteChildStatus {
        let parent = try makeParent("unreadable-\(name)")
        let worker = try makeWorker("unreadable-worker-\(name)", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)

        let first = WorkflowHost(workflow: CounterHolder(), loop: parent)
        let screen = try await rendering(of: first, "the counter") { $0.count == 0 }
        screen.onIncrement.send(3)
        try await rendering(of: first, "the count at 3") { $0.count == 3 }
        let snapshot = await first.snapshot()
        await first.stop()

        let restored = WorkflowHost(workflow: CounterHolder(), snapshot: try written(byStateVersion: stateVersion, snapshot), loop: parent)
        let status = try await status(of: parent, pathSuffix: "[c]", where: { if case .unavailable = $0 { true } else { false } })
        #expect(restored.rendering.count != 0, "the child must not restart from its initial state")
        await restored.stop()
        await worker.shutdown()
        await parent.shutdown()
        return status
    }

    @Test("a snapshot of a newer state version than any worker reads: unavailable(noWorkerReadsState), never sent to a worker, never a counter back at 0")
    func newerSnapshotWaitsForAReader() async throws {
        let status = try await Self.restoredStatus(stateVersion: 9, name: "newer")
        #expect(status == .unavailable(.noWorkerReadsState(typeName: CounterWorkflow.workflowTypeName, stateVersion: 9, placement: "anyWorker")))
        #expect(status.description.contains("waiting for a worker that reads state version 9"), "\(status)")
    }

    @Test("a snapshot of an older state version with no migration: unavailable(undecodableSnapshot) with the worker's reason")
    func olderSnapshotWithoutMigrationIsATypedError() async throws {
        let status = try await Self.restoredStatus(stateVersion: 0, name: "older")
        guard case .unavailable(.undecodableSnapshot(let type, let reason)) = status else {
            Issue.record("expected undecodableSnapshot, got \(status)")
            return
        }
        #expect(type == CounterWorkflow.workflowTypeName)
        #expect(reason.contains("state version 0"), "\(reason)")
    }
}
