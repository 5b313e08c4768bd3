import Foundation
import RemoteTestSupport
import Testing
import WireProtocol
import Workflow
import WorkflowClusterTesting
import ZeroMQ
@testable import WorkflowRemote

/// A coordinator leaving its sessions at exit stops their remote children with one loop job
/// (`RemoteRuntime.stopRemoteChildren(ofTrees:)`) and does not tear each tree down; the trees'
/// later passes and teardowns must then send nothing more to the workers.
@Suite("Session trees left at exit")
struct SessionTreesAtExitTests {
    @Test("stopping a session tree's remote children sends one STOP for each and nothing for the other trees; the tree still renders its last renderings, and its later passes and teardown send nothing")
    func stoppedTreeSendsNothingMore() async throws {
        let (parent, socket) = try await BareWorker.joinedParent("exit", requestTimeout: safetyTimeout * 4)

        let left = WorkflowHost(
            workflow: Self.board(["x", "y"], step: 1), loop: SessionLoop(runtime: parent, scope: "left"))
        let kept = WorkflowHost(workflow: Self.board(["z"], step: 1), loop: SessionLoop(runtime: parent, scope: "kept"))
        let leftPrefix = SessionLoop.pathPrefix(scope: "left")
        let keptPrefix = SessionLoop.pathPrefix(scope: "kept")

        // Every START answered with a rendering: both trees settle with the worker's counts.
        let starts = try await Self.messages(on: socket) { seen in seen.filter { $0.kind == .start }.count == 3 }
            .filter { $0.kind == .start }
        for (index, start) in starts.enumerated() {
            try socket.send(Envelope(
                kind: .rendering, correlationID: start.correlationID, sequence: start.sequence, epoch: start.epoch,
                nodePath: start.nodePath,
                payloads: [try BinaryWireCodec().encode(Mirror(label: "", count: 40 + index, onIncrement: "t\(index)"))]).encodeFrames())
        }
        let leftStarts = Set(starts.filter { $0.nodePath.hasPrefix(leftPrefix + "/") }.map(\.correlationID))
        #expect(leftStarts.count == 2)
        let settled = try await withSafetyTimeout("the left tree's settled rendering") { () -> [String: CounterScreen]? in
            for await rendering in left.renderings where rendering.values.allSatisfy({ $0.count >= 40 }) { return rendering }
            return nil
        }
        #expect(settled?.count == 2)

        await parent.stopRemoteChildren(ofTrees: [leftPrefix])
        let stops = try await Self.messages(on: socket) { seen in seen.filter { $0.kind == .stop }.count == 2 }
            .filter { $0.kind == .stop }
        #expect(Set(stops.map(\.correlationID)) == leftStarts, "one STOP for each of the left tree's children, none for the kept tree's")

        // The left tree lives on: new props render at once (nothing to wait for), with the
        // counts it showed, and its teardown follows. Neither sends anything.
        let after = try await withSafetyTimeout("the left tree's pass after its children stopped") {
            await left.updateAndAwaitRendering(workflow: Self.board(["x", "y"], step: 2))
        }
        #expect(after?.mapValues(\.count) == settled?.mapValues(\.count))
        await left.stop()

        // The kept tree's UPDATE is the next thing the worker is sent about any child.
        kept.update(workflow: Self.board(["z"], step: 2))
        let next = try await Self.messages(on: socket) { seen in seen.contains { $0.kind == .update } }
            .filter { [.start, .update, .stop, .event].contains($0.kind) }
        #expect(next.count == 1 && next.first?.nodePath.hasPrefix(keptPrefix + "/") == true, "\(next.map { ($0.kind, $0.nodePath) })")

        socket.close()
        await kept.stop()
        await parent.shutdown()
    }

    static func board(_ keys: [String], step: Int) -> CounterBoardWorkflow {
        CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: step) }, placement: .pool("p"))
    }

    /// Every message read from `socket` (batches split), until `done` holds for those read so
    /// far (bounded by the safety timeout).
    static func messages(on socket: ZMQSocket, until done: ([Envelope]) -> Bool) async throws -> [Envelope] {
        let deadline = ContinuousClock.now + safetyTimeout
        var seen: [Envelope] = []
        while !done(seen) {
            guard let frames = try await socket.nextMultipart(before: deadline) else {
                throw WaitFailure(description: "the messages awaited did not come within \(safetyTimeout): \(seen.map(\.kind))")
            }
            let envelope = try Envelope(frames: frames)
            if envelope.kind == .batch, let messages = Outbox.split(envelope) {
                seen += try messages.map { try Envelope(frames: $0) }
            } else {
                seen.append(envelope)
            }
        }
        return seen
    }

    /// A counter's rendering as a worker encodes it (a sink encodes as its token).
    struct Mirror: Encodable {
        var label: String
        var count: Int
        var step = 1
        var onIncrement: String
    }
}
