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

    /// A root whose rendering is mostly content (200 titled rows) and one sink: across a restart
    /// its token changes (a token names its host's start), its rows do not.
    struct ShelfWorkflow: Workflow, Sendable {
        struct Row: Encodable, Sendable {
            var id: Int
            var title: String
        }
        struct Screen: Encodable, Sendable {
            var count: Int
            var rows: [Row]
            var add: Sink<Int>
        }

        func makeInitialState() -> Int { 0 }

        func render(state: Int, context: RenderContext<ShelfWorkflow>) -> Screen {
            let add = context.makeSink(of: Int.self) { amount in
                AnyWorkflowAction<ShelfWorkflow> { count, _ in
                    count += amount
                    return nil
                }
            }
            return Screen(count: state, rows: (0..<200).map { Row(id: $0, title: "row \($0) of the shelf") }, add: add)
        }
    }

    /// The shelf as the shared root of a coordinator on the store `section` (started from its
    /// latest checkpoint, as a coordinator starts).
    static func start(_ section: [String: String]) async throws -> (WorkflowRootSession<ShelfWorkflow>, OpenedCoordinatorStore) {
        let opened = try await DurableSessionRouteTests.open(section)
        let logger = GatewayTesting.quietLogger
        let committer = CheckpointCommitter(store: opened.store, token: opened.token, restored: opened.checkpoint, logger: logger)
        let session = WorkflowRootSession(
            name: "shelf", workflow: ShelfWorkflow(), snapshot: opened.snapshot, loop: nil, observers: [], frames: nil, logger: logger,
            retainedTokens: 4096, durability: committer)
        return (session, opened)
    }

    /// The count of a shelf rendering.
    static func count(_ rendering: JSONValue) -> Int64? {
        guard case .object(let screen) = rendering, case .integer(let count)? = screen["count"] else { return nil }
        return count
    }

    @Test(
        "a client reconnecting to a coordinator restarted on the store with since = the last committed sequence gets a delta (no whole frame) to the restored tree's rendering; the checkpoint keeps that frame and the run; another run gets a whole frame",
        arguments: StoreBackend.allCases)
    func resumesWithADeltaAfterARestart(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("stream-resume") { section in
            let (first, firstStore) = try await Self.start(section)
            guard case .object(let screen) = try #require(JSONValue(json: first.latestRendering.json)), case .string(let add)? = screen["add"] else {
                Issue.record("no sink in \(String(decoding: first.latestRendering.json, as: UTF8.self))")
                return
            }
            try await first.send(event: Data("2".utf8), to: add)
            _ = try await withSafetyTimeout("the rendering of the event") {
                for await rendering in first.renderings() where Self.count(JSONValue(json: rendering.json) ?? .null) == 2 { return }
            }
            let applied = try await GatewayTesting.application(session: first, options: RenderingDeltaStreamTests.options()).test(.live) { client in
                try await RenderingDeltaStreamTests.firstMessage(client, "deltas=1")
            }
            await first.stop()
            await firstStore.store.close()
            #expect(applied.whole == 1 && applied.speaksDeltas && Self.count(applied.rendering) == 2)

            let (second, secondStore) = try await Self.start(section)
            // The store kept the frame the client has, with the stream's run.
            let checkpoint = try #require(secondStore.checkpoint)
            let kept = try #require(CheckpointRendering.kept(in: checkpoint.snapshot))
            #expect(kept.run == applied.run && kept.sequence == applied.sequence && checkpoint.renderingSequence == applied.sequence)
            #expect(kept.rendering.flatMap { JSONValue(json: $0) } == applied.rendering)
            try await GatewayTesting.application(session: second, options: RenderingDeltaStreamTests.options()).test(.live) { client in
                let resumed = try await RenderingDeltaStreamTests.firstMessage(client, "deltas=1&since=\(applied.sequence)&run=\(applied.run)", to: applied)
                #expect(resumed.deltas == 1 && resumed.whole == 1, "only the changes after the client's frame")
                #expect(resumed.sequence > applied.sequence, "the restarted tree renders after the committed sequence")
                #expect(resumed.rendering == JSONValue(json: second.latestRendering.json), "the restored tree's rendering, new token included")
                #expect(Self.count(resumed.rendering) == 2)
                // One of another run (a store begun again) gets a whole frame.
                let other = try await RenderingDeltaStreamTests.firstMessage(client, "deltas=1&since=\(applied.sequence)&run=another")
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

    @Test("a checkpoint payload is written byte for byte as JSONEncoder with sorted keys writes it, with and without a rendering")
    func payloadBytesAreJSONEncoders() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let snapshot = TreeSnapshot(
            workflowType: "Board/v\\2", state: Data((0...255).map(UInt8.init)),
            children: [.init(key: "c\n\"", snapshot: TreeSnapshot(workflowType: "Counter", state: nil))])
        for rendering in [
            CheckpointRendering(run: "r/1", sequence: 7, rendering: Data(#"{"a":"/"}"#.utf8)),
            CheckpointRendering(run: "r1", sequence: 0, rendering: nil), nil,
        ] {
            let expected = try encoder.encode(CheckpointRendering.Payload(snapshot: snapshot, stream: rendering))
            #expect(try CheckpointRendering.payload(snapshot, with: rendering) == expected)
        }
    }
}
