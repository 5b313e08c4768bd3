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

/// A remote child restored from a snapshot its worker cannot read (written by a newer build) is
/// not started afresh: it is unavailable with a typed reason, its snapshot kept.
@Suite struct UnreadableSnapshotTests {
    /// `snapshot` with the remote counter's own snapshot marked as written by state version 9.
    static func fromANewerBuild(_ snapshot: TreeSnapshot) throws -> TreeSnapshot {
        var copy = snapshot
        for index in copy.children.indices {
            copy.children[index].snapshot = try fromANewerBuild(copy.children[index].snapshot)
        }
        // A remote child's node (`Remote<Type>`) keeps the child's own snapshot in its state.
        guard copy.workflowType.hasPrefix("Remote<"), let state = copy.state,
            var object = try JSONSerialization.jsonObject(with: state) as? [String: Any],
            var child = object["snapshot"] as? [String: Any]
        else { return copy }
        child["stateVersion"] = 9
        object["snapshot"] = child
        copy.state = try JSONSerialization.data(withJSONObject: object)
        return copy
    }

    @Test("a snapshot of a newer state version: unavailable(undecodableSnapshot), never a counter back at 0")
    func newerSnapshotIsATypedError() async throws {
        let parent = try makeParent("unreadable-snapshot")
        let worker = try makeWorker("unreadable-worker", parent: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)

        let first = WorkflowHost(workflow: CounterHolder(), loop: parent)
        let screen = try await rendering(of: first, "the counter") { $0.count == 0 }
        screen.onIncrement.send(3)
        try await rendering(of: first, "the count at 3") { $0.count == 3 }
        let snapshot = await first.snapshot()
        await first.stop()

        let restored = WorkflowHost(workflow: CounterHolder(), snapshot: try Self.fromANewerBuild(snapshot), loop: parent)
        let status = try await status(of: parent, pathSuffix: "[c]", where: { if case .unavailable = $0 { true } else { false } })
        guard case .unavailable(.undecodableSnapshot(let type, let reason)) = status else {
            Issue.record("expected undecodableSnapshot, got \(status)")
            return
        }
        #expect(type == CounterWorkflow.workflowTypeName)
        #expect(reason.contains("state version 9"), "\(reason)")
        #expect(restored.rendering.count != 0, "the child must not restart from its initial state")

        await restored.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
