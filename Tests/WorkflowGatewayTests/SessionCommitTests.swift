import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowCluster
import WorkflowClusterTesting
import WorkflowRemote

/// A session's capture waits (bounded) for its remote children to acknowledge the events it
/// commits (`SessionLoop.whenEventsAcknowledged(within:_:)`): one checkpoint then holds an event
/// and the rendering its worker's answer brings, where two did.
@Suite("Session commits")
struct SessionCommitTests {
    /// A board session of one remote counter on a worker, committing to `opened`, its capture
    /// waiting up to `wait` for acknowledgements.
    struct Fixture {
        let parent: RemoteRuntime
        let worker: RemoteRuntime
        let session: WorkflowRootSession<CounterBoardWorkflow>
        let opened: OpenedCoordinatorStore

        init(_ name: String, store section: [String: String], wait: Duration) async throws {
            let counter = CounterWorkflow.workflowTypeName
            let placement = PlacementTable(rules: [.init(pattern: counter, placement: .worker("\(name)-worker"))])
            parent = try GatewayTesting.parentRuntime(name: "\(name)-parent", placement: placement)
            worker = try GatewayTesting.worker(named: "\(name)-worker", joining: parent)
            await parent.waitForWorkers(count: 1)
            opened = try await DurableSessionRouteTests.open(section)
            let committer = CheckpointCommitter(
                store: opened.store, token: opened.token, restored: opened.checkpoint, logger: GatewayTesting.quietLogger,
                acknowledgementWait: wait)
            session = WorkflowRootSession(
                name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .configured), snapshot: nil,
                loop: SessionLoop(runtime: parent, scope: "s1"), observers: [], frames: nil, logger: GatewayTesting.quietLogger,
                retainedTokens: 4096, durability: committer)
        }

        /// The first rendering with the counter's sink: its worker runs it.
        func firstToken() async throws -> String {
            let session = self.session
            let token = try await withSafetyTimeout("the counter's first rendering from its worker") { () -> String? in
                for await rendering in session.renderings() {
                    if let token = (try? JSONDecoder().decode(BoardJSON.self, from: rendering.json))?.c.onIncrement { return token }
                }
                return nil
            }
            return try #require(token, "the session stopped before its counter rendered")
        }

        /// The number of the latest committed checkpoint (0: none).
        func checkpointNumber() async throws -> Int64 {
            try await opened.store.latestCheckpoint()?.number ?? 0
        }

        func stop() async {
            await session.stop()
            await opened.store.close()
            await worker.shutdown()
            await parent.shutdown()
        }
    }

    @Test("each event a session sends its remote counter is answered, and then shown, after one commit that holds both the event and the rendering its worker's answer brings")
    func oneCommitPerEvent() async throws {
        try await StoreBackend.sqlite.withEmptyStore("session-commits") { section in
            let fixture = try await Fixture("commits", store: section, wait: safetyTimeout)
            let token = try await fixture.firstToken()
            // Counted from the first event's answer: the commits of the counter's first
            // renderings may still be under way before it.
            try await fixture.session.send(event: Data("1".utf8), to: token)
            let first = try await fixture.checkpointNumber()
            let shown = Task {
                for await rendering in fixture.session.renderings() {
                    if (try? JSONDecoder().decode(BoardJSON.self, from: rendering.json))?.c.count == 5 { return true }
                }
                return false
            }
            for sent in 2...5 {
                try await fixture.session.send(event: Data("1".utf8), to: token)
                // Answered: the checkpoint committed for it already holds the counter's new count.
                let checkpoint = try #require(try await fixture.opened.store.latestCheckpoint())
                let kept = try #require(CheckpointRendering.kept(in: checkpoint.snapshot)?.rendering)
                #expect(try JSONDecoder().decode(BoardJSON.self, from: kept).c.count == sent)
            }
            #expect(try await withSafetyTimeout("the last count shown") { await shown.value })
            // Four events, a commit each (eight without the wait). One more is allowed: on a
            // loaded machine a commit of the counter's first renderings may come after the
            // first event's.
            let commits = try await fixture.checkpointNumber() - first
            #expect(commits <= 5, "4 events took \(commits) commits: their renderings took commits of their own")
            await fixture.stop()
        }
    }

    @Test("with the counter's worker gone, an event is still answered once the wait has passed: the capture does not wait for an acknowledgement that cannot come")
    func answeredWithoutTheWorker() async throws {
        try await StoreBackend.sqlite.withEmptyStore("session-commits-gone") { section in
            let fixture = try await Fixture("commits-gone", store: section, wait: .milliseconds(200))
            let token = try await fixture.firstToken()
            await fixture.worker.shutdown()
            let before = try await fixture.checkpointNumber()
            try await withSafetyTimeout("the event's answer without its worker") {
                try await fixture.session.send(event: Data("1".utf8), to: token)
            }
            #expect(try await fixture.checkpointNumber() > before)
            await fixture.stop()
        }
    }
}
