import ClusterTestSupport
import Foundation
import HummingbirdTesting
import HummingbirdWSTesting
import Testing
import Workflow
import WorkflowCluster
@testable import WorkflowGateway
import WorkflowClusterTesting

/// A durable tree's stream resumed across a coordinator's restart on a real store: the frame of
/// the last committed rendering and the stream's run are kept with the checkpoint, so a client
/// reconnecting with `since` gets only the changes.
@Suite("Stream resume across a restart, with a store")
struct DurableStreamResumeTests {
    typealias Applied = RenderingDeltaStreamTests.Applied

    @Test(
        "a session's client reconnecting to a restarted coordinator with since = the last committed sequence gets a delta (no whole frame) to the restored tree's rendering; the checkpoint keeps that frame and the run",
        arguments: StoreBackend.allCases)
    func sessionResumesWithADeltaAfterARestart(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("stream-resume") { section in
            let firstStore = try await DurableSessionRouteTests.open(section)
            let first = try await SessionRouteTests.Fixture("gw-resume-run1", store: firstStore)
            let (id, applied) = try await first.application().test(.live) { client in
                let id = try await SessionRouteTests.create(client)
                let token = try #require(try await SessionRouteTests.rendering(client, first, id, count: 0).rendering.c.onIncrement)
                #expect(try await SessionRouteTests.post(client, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(token))", "2").0 == .accepted)
                _ = try await SessionRouteTests.rendering(client, first, id, count: 2)
                let applied = try await RenderingDeltaStreamTests.firstMessage(client, "deltas=1", path: "/api/sessions/\(id)/renderings")
                return (id, applied)
            }
            await first.stop()
            await firstStore.store.close()
            #expect(applied.whole == 1 && applied.speaksDeltas && !applied.run.isEmpty)

            // The store keeps the frame the client has, with the stream's run.
            let stored = try #require(try await DurableSessionRouteTests.stored(section, SessionID(id)).checkpoint)
            let kept = try #require(CheckpointRendering.kept(in: stored.snapshot))
            #expect(kept.run == applied.run && kept.sequence == applied.sequence && stored.renderingSequence == applied.sequence)
            #expect(kept.rendering.flatMap { JSONValue(json: $0) } == applied.rendering)

            let secondStore = try await DurableSessionRouteTests.open(section)
            let second = try await SessionRouteTests.Fixture("gw-resume-run2", store: secondStore)
            try await second.application().test(.live) { client in
                let resumed = try await RenderingDeltaStreamTests.firstMessage(
                    client, "deltas=1&since=\(applied.sequence)&run=\(applied.run)", path: "/api/sessions/\(id)/renderings", to: applied)
                #expect(resumed.deltas == 1 && resumed.whole == 1, "only the changes after the client's frame")
                #expect(resumed.sequence > applied.sequence, "the restored tree renders after the committed sequence")
                guard case .object(let rendering) = resumed.rendering, case .object(let counter)? = rendering["c"] else {
                    Issue.record("not a board: \(resumed.rendering)")
                    return
                }
                #expect(counter["count"] == .integer(2), "the restored state, as the client now has it")
                // One of another run (a store begun again) gets a whole frame.
                let other = try await RenderingDeltaStreamTests.firstMessage(
                    client, "deltas=1&since=\(applied.sequence)&run=another", path: "/api/sessions/\(id)/renderings")
                #expect(other.whole == 1 && other.deltas == 0)
            }
            await second.stop()
            await secondStore.store.close()
        }
    }

    @Test("a checkpoint payload reads as the tree snapshot it carries; one written before the stream field existed restores with none")
    func payloadIsTolerant() throws {
        let snapshot = TreeSnapshot(workflowType: "Board", state: Data("{\"n\":1}".utf8), children: [.init(key: "c", snapshot: TreeSnapshot(workflowType: "Counter", state: nil))])
        let rendering = CheckpointRendering(run: "r1", sequence: 7, rendering: Data(#"{"a":1}"#.utf8))
        let payload = try CheckpointRendering.payload(snapshot, with: rendering)
        #expect(try TreeSnapshot.decode(from: payload) == snapshot)
        #expect(CheckpointRendering.kept(in: payload) == rendering)
        let older = try snapshot.encoded()
        #expect(CheckpointRendering.kept(in: older) == nil)
        #expect(try TreeSnapshot.decode(from: older) == snapshot)
    }
}
