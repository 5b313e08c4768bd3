import Foundation
import Testing
import RemoteTestSupport
import Workflow
import WireProtocol
@testable import WorkflowRemote

/// EVENT and OUTPUTS carry their events and outputs packed in one frame (protocol 4): the sizes
/// in the header must describe that frame exactly, or the whole message is dropped, and the
/// receiver keeps serving.
@Suite struct PackedFrameTests {
    /// EVENT's first payload as a parent sends it.
    struct EventsMirror: Codable {
        var tokens: [String]
        var tokenIndexes: [UInt32]
        var lengths: [UInt32]
    }

    /// OUTPUTS' first payload, as far as these tests read it.
    struct OutputsMirror: Codable {
        var causes: [UInt64]
        var ordinals: [UInt32]
        var lengths: [UInt32]
    }

    /// A counter's screen as the worker encodes it: the sink is its token.
    struct ScreenMirror: Codable {
        var label: String
        var count: Int
        var step: Int
        var onIncrement: String
    }

    @Test func workerDropsAMalformedEventsFrameWholeAndKeepsServing() async throws {
        let parent = try BadInputTests.RawParent("packed-parent")
        let worker = try makeWorker("packed-worker", parent: parent.endpoint, registry: remoteTestRegistry, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        try parent.send(Envelope(
            kind: .start, correlationID: 1, sequence: 1, epoch: 1, nodePath: "/packed",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow())]))
        let rendering = try await parent.receive()
        #expect(rendering.kind == .rendering && rendering.correlationID == 1)
        let token = try codec.decode(ScreenMirror.self, from: rendering.payloads[0]).onIncrement

        let one = try codec.encode(1)
        func events(_ header: EventsMirror, _ frames: [[UInt8]]) throws -> Envelope {
            Envelope(kind: .event, correlationID: 1, sequence: 1, epoch: 1, nodePath: "/packed", payloads: [try codec.encode(header)] + frames)
        }
        // Sizes that add up to more than the frame, to less, a token index per event missing,
        // the events frame missing, and a frame too many: each dropped whole, nothing applied.
        let size = UInt32(one.count)
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0, 0], lengths: [size, size]), [one]))
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0], lengths: [size - 1]), [one]))
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0], lengths: [size, 0]), [one + one]))
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0], lengths: [size]), []))
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0], lengths: [size]), [one, one]))
        // A header that is not an EVENT header at all.
        try parent.send(Envelope(kind: .event, correlationID: 1, sequence: 1, epoch: 1, nodePath: "/packed", payloads: [[0xFF], one]))

        // Still serving: a well-formed message of two events applies both, each on its own.
        try parent.send(events(EventsMirror(tokens: [token], tokenIndexes: [0, 0], lengths: [size, size]), [one + one]))
        var outputs: [Int] = []
        var causes: [UInt64] = []
        var acknowledged: UInt64 = 0
        while acknowledged < 2 {
            let message = try await parent.receive()
            guard message.kind == .outputs else { continue }
            let info = try codec.decode(OutputsMirror.self, from: message.payloads[0])
            #expect(info.lengths.count == info.causes.count)
            if !info.lengths.isEmpty {
                #expect(PackedValues.lengths(info.lengths, match: message.payloads[1].count))
                PackedValues.forEach(in: message.payloads[1], lengths: info.lengths) { _, bytes in
                    outputs.append((try? codec.decode(Int.self, from: bytes)) ?? -1)
                    return true
                }
            }
            causes += info.causes
            acknowledged = max(acknowledged, message.acknowledged)
        }
        #expect(outputs == [1, 2], "only the well-formed message's two events applied")
        #expect(causes == [1, 2])
        #expect(worker.workerCounters.events == 2)
        #expect(worker.workerCounters.droppedEvents >= 6)
        await worker.shutdown()
    }

    /// A packed event counts as a frame towards a batch's limit: a batch carries no more
    /// events than it did with one frame per event, so a worker, which ends a slice of input only
    /// between the messages it receives, still ends one after at most 255 + 64 events.
    @Test func aBatchCarriesNoMoreEventsThanItsFrameLimit() throws {
        var outbox = Outbox()
        var held: [[[UInt8]]] = []
        for index in 0..<10 {
            let header = EnvelopeHeader(kind: .event, codec: .binary, correlationID: UInt64(index), sequence: 1)
            let payloads = [[UInt8(index)], [UInt8](repeating: UInt8(index), count: 20)]
            try outbox.append(header, payloads: payloads, packedValues: 20)
            held.append([try header.encode()] + payloads)
        }
        var received: [[[UInt8]]] = []
        outbox.send(codec: BinaryWireCodec()) { message in
            let frames = message.frames
            if message.kind == .batch, let messages = try? Outbox.split(Envelope(frames: frames)) {
                // Two messages of 3 frames and 20 events weigh 46; a third would make 69 > 63.
                #expect(messages.count == 2)
                received += messages
            } else {
                received.append(frames)
            }
            return true
        }
        #expect(received == held, "every message once, in order")
    }

    /// How many values one message takes: up to the count limit, and within the frame size limit
    /// unless a single value is larger (it goes alone).
    @Test func valuesAreTakenWithinTheCountAndFrameLimits() {
        let limits = WireLimits(maxFrameBytes: 100)
        #expect(PackedValues.prefixFitting([10, 10, 10], maxCount: 2, limits: limits) == 2)
        #expect(PackedValues.prefixFitting([60, 40, 1], maxCount: 10, limits: limits) == 2)
        #expect(PackedValues.prefixFitting([150, 1], maxCount: 10, limits: limits) == 1)
        #expect(PackedValues.prefixFitting([Int](), maxCount: 10, limits: limits) == 0)
        #expect(PackedValues.lengths([1, 2], match: 3))
        #expect(!PackedValues.lengths([1, 2], match: 4))
        #expect(!PackedValues.lengths([UInt32.max, UInt32.max], match: 2))
        var packed = PackedValues()
        packed.append([1, 2])
        packed.append([])
        packed.append([3])
        var values: [[UInt8]] = []
        PackedValues.forEach(in: packed.bytes, lengths: packed.lengths) { _, bytes in
            values.append(Array(bytes))
            return true
        }
        #expect(values == [[1, 2], [], [3]])
    }
}
