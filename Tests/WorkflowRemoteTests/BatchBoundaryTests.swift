import Foundation
import Testing
import RemoteTestSupport
import Workflow
import WireProtocol
import WorkflowClusterTesting
@testable import WorkflowRemote

/// Batching (issue 14) must not change what a child applies: the parent sends a child's events
/// of one loop iteration in EVENT messages of up to 64 (packed in one frame), replays unacknowledged ones after a
/// failover in batches that start wherever the acknowledgement left off, and packs messages for
/// one worker into `batch` messages. None of those boundaries may matter.
@Suite struct BatchBoundaryTests {
    /// Bursts sized around the 64-event message limit, and kills timed so that a worker dies with
    /// part of a batch applied: the replay's batches then start mid-way through the original
    /// ones. Every output must still arrive exactly once, in order.
    @Test func replayDoesNotDependOnWhereBatchesEnd() async throws {
        let parent = try makeParent("batch-boundaries", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        var worker = try WorkerProcess(name: "boundary", connect: endpoint)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("boundary")), loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        let bursts = [1, 63, 64, 65, 127, 128, 129, 200, 1, 64, 65, 300, 2, 191, 192, 62, 1_000, 5, 64, 128]
        let total = bursts.reduce(0, +)
        let progress = Progress()
        let collector = progress.collect(outputs, upTo: total) { $0.count }

        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SplitMix64(seed: seed)
        var sent = 0
        for (index, burst) in bursts.enumerated() {
            for _ in 0..<burst { screen.onIncrement.send(1) }
            sent += burst
            // Every fourth burst: kill once part of it is applied (never at a message boundary).
            if index % 4 == 3, index < bursts.count - 1 {
                var target = sent - burst + Int.random(in: 1...max(1, burst - 1), using: &generator)
                if target % PackedValues.maxEventsPerMessage == 0 { target += 1 }
                let goal = min(target, sent)
                try await eventually("progress to \(goal)") { progress.count.load(ordering: .relaxed) >= goal }
                worker.kill()
                worker = try WorkerProcess(name: "boundary", connect: endpoint)
            }
        }
        // SIGKILL, not SIGTERM: a worker SIGTERMed here was once seen never to exit (its loop kept
        // reconnecting), which hung the cleanup; the test is about the events, not the leave.
        defer { worker.kill() }

        let seen = try await withSafetyTimeout("\(total) outputs") { await collector.value }
        #expect(seen == Array(1...total), "seed \(seed): every output exactly once, in order")
        let final = try await rendering(of: host, "the final count") { $0["c"]?.count == total }
        #expect(final["c"]?.count == total)

        await host.stop()
        await parent.shutdown()
    }

    /// Held messages are packed into `batch` messages within the frame limit, and a receiver
    /// splits them back into exactly the messages that were held, in order.
    @Test func outboxPacksWithinTheFrameLimitAndSplitsBack() throws {
        let codec = BinaryWireCodec()
        var outbox = Outbox()
        var held: [[[UInt8]]] = []
        for index in 0..<100 {
            // Messages of 1 to 4 frames (a header and up to 3 payloads).
            let payloads = (0..<(index % 4)).map { [UInt8(index), UInt8($0)] }
            let frames = try Envelope(kind: .update, correlationID: UInt64(index), payloads: payloads).encodeFrames()
            held.append(frames)
            outbox.append(frames)
        }
        // One too large to share a batch goes alone.
        let large = try Envelope(kind: .event, payloads: Array(repeating: [1], count: 63)).encodeFrames()
        held.append(large)
        outbox.append(large)

        var sends: [(kind: MessageKind, frames: [[UInt8]])] = []
        outbox.send(codec: codec) { message in
            sends.append((message.kind, message.frames))
            return true
        }
        var received: [[[UInt8]]] = []
        for send in sends {
            #expect(send.frames.count <= 1 + WireLimits.default.maxPayloadFrames)
            let envelope = try Envelope(frames: send.frames)
            if send.kind == .batch {
                #expect(envelope.kind == .batch)
                received += try #require(Outbox.split(envelope))
            } else {
                received.append(send.frames)
            }
        }
        #expect(received == held)
        #expect(sends.count < held.count)
        #expect(outbox.isEmpty)
    }

    /// Full batches sent while messages are still being held (`sendClosedBatches`, as a render
    /// pass does for a worker) are the very batches `send` alone makes: the same messages in
    /// the same order and the same packing, and an open batch stays held until the end.
    @Test func closedBatchesLeaveEarlyExactlyAsTheyWouldAtTheEnd() throws {
        let codec = BinaryWireCodec()
        var all: [[[UInt8]]] = []
        for index in 0..<300 {
            // Messages of 1 to 4 frames, and now and then one too large to share a batch.
            let count = index % 97 == 50 ? 63 : index % 4
            let payloads = (0..<count).map { [UInt8(index % 256), UInt8($0)] }
            all.append(try Envelope(kind: .update, correlationID: UInt64(index), payloads: payloads).encodeFrames())
        }
        func frames(_ send: (inout Outbox, (OutgoingMessage) -> Bool) -> Void, _ outbox: inout Outbox, into sends: inout [[[UInt8]]]) {
            var sent: [[[UInt8]]] = []
            send(&outbox) { message in
                sent.append(message.frames)
                return true
            }
            sends += sent
        }
        // At the end only.
        var whole = Outbox()
        var atEnd: [[[UInt8]]] = []
        for message in all { whole.append(message) }
        frames({ outbox, transmit in outbox.send(codec: codec, transmit) }, &whole, into: &atEnd)
        // Closed batches as soon as there are any, then the rest at the end.
        var early = Outbox()
        var sends: [[[UInt8]]] = []
        var sentEarly = 0
        for message in all {
            early.append(message)
            if early.hasClosedBatch {
                let before = sends.count
                frames({ outbox, transmit in outbox.sendClosedBatches(codec: codec, transmit) }, &early, into: &sends)
                sentEarly += sends.count - before
            }
            #expect(!early.isEmpty, "the open batch stays held")
        }
        frames({ outbox, transmit in outbox.send(codec: codec, transmit) }, &early, into: &sends)
        #expect(sentEarly > 0)
        #expect(sends == atEnd)
        #expect(early.isEmpty)
        var received: [[[UInt8]]] = []
        for send in sends {
            #expect(send.count <= 1 + WireLimits.default.maxPayloadFrames)
            let envelope = try Envelope(frames: send)
            received += envelope.kind == .batch ? try #require(Outbox.split(envelope)) : [send]
        }
        #expect(received == all)
        // A peer found gone while early batches leave: the rest is moot, nothing stays held.
        var failing = Outbox()
        for message in all.prefix(100) { failing.append(message) }
        failing.sendClosedBatches(codec: codec) { _ in false }
        #expect(failing.isEmpty)
    }

    @Test func malformedBatchesAreRefused() throws {
        let codec = BinaryWireCodec()
        let inner = try Envelope(kind: .stop, correlationID: 1).encodeFrames()
        func batch(_ counts: [UInt32], _ frames: [[UInt8]]) throws -> Envelope {
            Envelope(kind: .batch, payloads: [try codec.encode(BatchLayout(frameCounts: counts))] + frames)
        }
        // Counts that do not add up, an empty message, a batch inside a batch, no layout.
        #expect(Outbox.split(try batch([2], inner)) == nil)
        #expect(Outbox.split(try batch([1, 0], inner)) == nil)
        let nested = try Envelope(kind: .batch).encodeFrames()
        #expect(Outbox.split(try batch([1, 1], inner + nested)) == nil)
        #expect(Outbox.split(Envelope(kind: .batch)) == nil)
        #expect(Outbox.split(try batch([1, 1], inner + inner))?.count == 2)
    }
}
