import Foundation
import RemoteTestSupport
import Testing
import WireProtocol
import Workflow
import WorkflowClusterTesting
import ZeroMQ
@testable import WorkflowRemote

/// A session's render pass that waits for its remote children does not hold the runtime's loop
/// (`SessionLoop.settleRenderPass(resuming:)`): other sessions start and render meanwhile, and the
/// waiting session still publishes only its settled rendering.
@Suite("Session settles")
struct SessionSettleTests {
    @Test("while one session's first pass waits for a worker that has not answered, another session starts and renders on the same loop; the first then publishes its settled rendering, never the placeholder")
    func waitingSessionDoesNotHoldTheLoop() async throws {
        // Joined before the session renders: its child is placed at once, and its pass waits.
        // The request deadline is longer than the test's own waits: a pass holding the loop
        // would fail them first.
        let (parent, socket) = try await BareWorker.joinedParent("settle", requestTimeout: safetyTimeout * 4)

        // Session a: its counter goes to the hand-played worker, which holds its answer.
        let waiting = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("p")),
            loop: SessionLoop(runtime: parent, scope: "a"))
        let start = try await BareWorker.receive(.start, on: socket)
        #expect(start.nodePath.hasPrefix(SessionLoop.pathPrefix(scope: "a")))
        let firstOfWaiting = Task { () -> [String: CounterScreen]? in
            for await rendering in waiting.renderings { return rendering }
            return nil
        }

        // Session b (no remote children) starts and renders while a's pass waits.
        let other = try await withSafetyTimeout("another session starting while one waits for its worker") {
            await parent.run {
                WorkflowHost(workflow: CounterBoardWorkflow(counters: []), loop: SessionLoop(runtime: parent, scope: "b"))
            }
        }
        #expect(other.rendering.isEmpty)

        // The worker answers: a's first rendering is the settled one, with the worker's count.
        try socket.send(Envelope(
            kind: .rendering, correlationID: start.correlationID, sequence: start.sequence, epoch: start.epoch, nodePath: start.nodePath,
            payloads: [try BinaryWireCodec().encode(CounterScreenMirror(count: 41, onIncrement: "t1"))]).encodeFrames())
        let first = try await withSafetyTimeout("the waiting session's first rendering") { await firstOfWaiting.value }
        #expect(first?["c"]?.count == 41, "the first rendering published is the settled one: \(String(describing: first))")

        socket.close()
        await waiting.stop()
        await other.stop()
        await parent.shutdown()
    }

    /// A counter's rendering as a worker encodes it (a sink encodes as its token).
    struct CounterScreenMirror: Encodable {
        var label = "c"
        var count: Int
        var step = 1
        var onIncrement: String
    }
}
