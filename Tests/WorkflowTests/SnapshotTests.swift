import Foundation
import Testing
import Workflow

// A host can save its tree and a new host can start from the save: each node gets its state back
// the first time it is rendered again; anything unusable falls back to makeInitialState() and is
// reported to observers.

struct SnapshotRootWorkflow: Workflow, Sendable {
    struct State: Codable, Sendable { var count = 0 }
    struct Screen: Sendable {
        var count: Int
        var onAdd: Sink<Int>
        var middle: SnapshotMiddleWorkflow.Screen
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SnapshotRootWorkflow>) -> Screen {
        Screen(
            count: state.count,
            onAdd: context.makeSink(of: Int.self) { amount in
                AnyWorkflowAction<SnapshotRootWorkflow> { state, _ in
                    state.count += amount
                    return nil
                }
            },
            middle: SnapshotMiddleWorkflow().rendered(in: context, key: "middle"))
    }
}

struct SnapshotMiddleWorkflow: Workflow, Sendable {
    struct State: Codable, Sendable { var count = 0 }
    struct Screen: Sendable {
        var count: Int
        var onAdd: Sink<Int>
        var leaf: CounterScreen
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SnapshotMiddleWorkflow>) -> Screen {
        Screen(
            count: state.count,
            onAdd: context.makeSink(of: Int.self) { amount in
                AnyWorkflowAction<SnapshotMiddleWorkflow> { state, _ in
                    state.count += amount
                    return nil
                }
            },
            leaf: CounterWorkflow().rendered(in: context, key: "leaf", onOutput: { _, _ in nil }))
    }
}

/// A workflow with a declared stable name and a bumped state version.
struct VersionedWorkflow: StablyNamedWorkflow, Sendable {
    static var stableTypeName: String { "tests.Versioned" }
    static var stateVersion: Int { 2 }
    typealias State = Int
    func makeInitialState() -> Int { -1 }
    func render(state: Int, context: RenderContext<VersionedWorkflow>) -> Int { state }
}

@Suite struct SnapshotTests {
    let root = rootPath(SnapshotRootWorkflow.self)
    var middle: String { childPath(SnapshotMiddleWorkflow.self, key: "middle", under: root) }
    var leaf: String { childPath(CounterWorkflow.self, key: "leaf", under: middle) }

    /// A host whose root, middle and leaf counts are 1, 2 and 3.
    func populatedHost() async throws -> WorkflowHost<SnapshotRootWorkflow> {
        let host = WorkflowHost(workflow: SnapshotRootWorkflow())
        let screen = host.rendering
        screen.onAdd.send(1)
        screen.middle.onAdd.send(2)
        screen.middle.leaf.onAdd.send(3)
        try await rendering(of: host) { $0.count == 1 && $0.middle.count == 2 && $0.middle.leaf.count == 3 }
        return host
    }

    @Test func threeLevelTreeRoundTrips() async throws {
        let original = try await populatedHost()
        let snapshot = await original.snapshot()
        await original.stop()
        #expect(snapshot.workflowType == SnapshotRootWorkflow.workflowTypeName)
        #expect(snapshot.child(type: SnapshotMiddleWorkflow.workflowTypeName, key: "middle")?
            .child(type: CounterWorkflow.workflowTypeName, key: "leaf") != nil)

        let stored = try snapshot.encoded()
        let restoredSnapshot = try TreeSnapshot.decode(from: stored)
        #expect(restoredSnapshot == snapshot)

        let observer = RecordingObserver()
        let restored = WorkflowHost(workflow: SnapshotRootWorkflow(), observers: [observer], snapshot: restoredSnapshot)
        let screen = restored.rendering
        #expect(screen.count == 1)
        #expect(screen.middle.count == 2)
        #expect(screen.middle.leaf.count == 3)
        #expect(!observer.events.contains { if case .snapshotRejected = $0 { true } else { false } })

        // The restored tree is live: its sinks work and it snapshots its new state.
        screen.middle.leaf.onIncrement.send(())
        try await rendering(of: restored) { $0.middle.leaf.count == 4 }
        let again = await restored.snapshot()
        #expect(again != snapshot)
        await restored.stop()
    }

    @Test func corruptBytesAreRejectedByDecode() {
        #expect {
            try TreeSnapshot.decode(from: Data("not a snapshot".utf8))
        } throws: { error in
            guard case .corrupt = error as? SnapshotError else { return false }
            return true
        }
    }

    @Test func snapshotOfAnotherTypeFallsBackToInitialStateAndIsReported() async throws {
        let counterHost = WorkflowHost(workflow: CounterWorkflow())
        counterHost.rendering.onAdd.send(9)
        try await rendering(of: counterHost) { $0.count == 9 }
        let counterSnapshot = await counterHost.snapshot()
        await counterHost.stop()

        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: SnapshotRootWorkflow(), observers: [observer], snapshot: counterSnapshot)
        #expect(host.rendering.count == 0, "makeInitialState()")
        let rejection = try #require(observer.events.compactMap { event -> (String, String)? in
            if case .snapshotRejected(let path, let reason) = event { (path, reason) } else { nil }
        }.first)
        #expect(rejection.0 == root)
        #expect(rejection.1.contains(SnapshotRootWorkflow.workflowTypeName))
        #expect(rejection.1.contains(CounterWorkflow.workflowTypeName))
        await host.stop()
    }

    @Test func undecodableChildStateFallsBackForThatChildOnly() async throws {
        let original = try await populatedHost()
        var snapshot = await original.snapshot()
        await original.stop()
        // Damage the leaf's state bytes only.
        snapshot.children[0].snapshot.children[0].snapshot.state = Data("{\"count\": \"many\"}".utf8)

        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: SnapshotRootWorkflow(), observers: [observer], snapshot: snapshot)
        #expect(host.rendering.count == 1)
        #expect(host.rendering.middle.count == 2)
        #expect(host.rendering.middle.leaf.count == 0, "the leaf restarted from makeInitialState()")
        let rejected = observer.events.compactMap { event -> String? in
            if case .snapshotRejected(let path, _) = event { path } else { nil }
        }
        #expect(rejected == [leaf])
        await host.stop()
    }

    @Test func stateVersionMismatchFallsBackAndIsReported() async throws {
        let stale = TreeSnapshot(workflowType: "tests.Versioned", stateVersion: 1, state: Data("41".utf8))
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: VersionedWorkflow(), observers: [observer], snapshot: stale)
        #expect(host.rendering == -1)
        #expect(observer.events.contains { if case .snapshotRejected("/tests.Versioned", _) = $0 { true } else { false } })

        let current = TreeSnapshot(workflowType: "tests.Versioned", stateVersion: 2, state: Data("41".utf8))
        let restored = WorkflowHost(workflow: VersionedWorkflow(), snapshot: current)
        #expect(restored.rendering == 41, "the matching version restores")
        #expect(await restored.snapshot() == current, "the stable name and version are what is saved")
        await host.stop()
        await restored.stop()
    }
}

extension SnapshotTests {
    @Test func workersInARestoredTreeAreNotReportedAsRejected() async throws {
        let probe = Probe<WorkerEvent>()
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: probe, parkedID: 1))
        #expect(try await probe.next(1) == [.started(1)])
        let snapshot = await host.snapshot()
        await host.stop()

        let observer = RecordingObserver()
        let restored = WorkflowHost(
            workflow: WorkerParentWorkflow(probe: probe, parkedID: 1), observers: [observer], snapshot: snapshot)
        #expect(!observer.events.contains { if case .snapshotRejected = $0 { true } else { false } })
        await restored.stop()
    }
}
