import Testing
import WireProtocol
@testable import WorkflowRemote

/// The contract of `Outbox` (MessageBatch.swift), one peer's held messages, at its edges: a
/// batch's exact capacity (63 weight units after its layout frame, a packed value weighing one),
/// what goes alone, what an `append` refuses, and what a borrowed `OutgoingMessage` hands over.
/// `OutboxTests` and `BatchBoundaryTests` cover order and early batches over many messages.
@Suite struct MessageBatchTests {
    let codec = BinaryWireCodec()
    /// The weight one batch carries: its payload frames less the layout frame.
    let room = WireLimits.default.maxPayloadFrames - 1

    /// A header-only STOP numbered `number` (a message of one frame, weight 1).
    func stop(_ number: Int) -> EnvelopeHeader {
        EnvelopeHeader(kind: .stop, correlationID: UInt64(number), nodePath: "/n")
    }

    /// Everything `send` (or `sendClosedBatches`) hands over: each ZeroMQ message's kind and
    /// frames, and the messages it carries (a batch split as its receiver splits it).
    struct Sent {
        var kinds: [MessageKind] = []
        var messages: [[[UInt8]]] = []
        var carried: [[[[UInt8]]]] = []

        mutating func take(_ message: OutgoingMessage) -> Bool {
            let frames = message.frames
            kinds.append(message.kind)
            messages.append(frames)
            if message.kind == .batch, let envelope = try? Envelope(frames: frames), let split = Outbox.split(envelope) {
                carried.append(split)
            } else {
                carried.append([frames])
            }
            return true
        }

        /// The correlation ids of the carried messages, per ZeroMQ message.
        var ids: [[UInt64]] {
            carried.map { $0.map { (try? Envelope(frames: $0).correlationID) ?? .max } }
        }
    }

    @Test("a batch takes exactly 63 one-frame messages; the 64th goes in the next ZeroMQ message")
    func aBatchHoldsExactlyItsRoom() throws {
        var outbox = Outbox()
        for number in 0..<room { try outbox.append(stop(number), payloads: [[UInt8]]()) }
        #expect(!outbox.hasClosedBatch, "63 messages fill one batch without closing it")
        var full = Sent()
        var copy = outbox
        copy.send(codec: codec) { full.take($0) }
        #expect(full.kinds == [.batch])
        #expect(full.messages[0].count == 1 + WireLimits.default.maxPayloadFrames, "header, layout and 63 frames")
        #expect(full.ids == [(0..<room).map(UInt64.init)])

        try outbox.append(stop(room), payloads: [[UInt8]]())
        #expect(outbox.hasClosedBatch, "the 64th message cannot join the first batch")
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.kinds == [.batch, .stop], "the last message alone goes as itself")
        #expect(sent.ids == [(0..<room).map(UInt64.init), [UInt64(room)]])
        #expect(outbox.isEmpty)
    }

    @Test("a packed value weighs one frame: a two-frame message packing 61 values fills a batch on its own")
    func packedValuesCountTowardsTheLimit() throws {
        var outbox = Outbox()
        let packed = EnvelopeHeader(kind: .event, correlationID: 1, nodePath: "/n")
        try outbox.append(packed, payloads: [[1, 2, 3]], packedValues: room - 2)
        #expect(!outbox.hasClosedBatch, "2 frames and 61 values weigh 63")
        try outbox.append(stop(2), payloads: [[UInt8]]())
        #expect(outbox.hasClosedBatch, "one more frame weighs 64")
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.kinds == [.event, .stop], "neither shares a batch with the other")
        #expect(sent.messages[0] == [try packed.encode(), [1, 2, 3]], "the packed message as it was held")

        // Without the packed values the same two messages share one batch.
        var light = Outbox()
        try light.append(packed, payloads: [[1, 2, 3]])
        try light.append(stop(2), payloads: [[UInt8]]())
        var together = Sent()
        light.send(codec: codec) { together.take($0) }
        #expect(together.kinds == [.batch])
        #expect(together.ids == [[1, 2]])
    }

    @Test("a message too heavy to share goes alone between batches, and the order holds")
    func aHeavyMessageGoesAloneInOrder() throws {
        var outbox = Outbox()
        for number in 0..<3 { try outbox.append(stop(number), payloads: [[UInt8]]()) }
        let heavy = EnvelopeHeader(kind: .update, correlationID: 3, nodePath: "/n")
        try outbox.append(heavy, payloads: Array(repeating: [7], count: WireLimits.default.maxPayloadFrames))
        for number in 4..<6 { try outbox.append(stop(number), payloads: [[UInt8]]()) }
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.kinds == [.batch, .update, .batch])
        #expect(sent.ids == [[0, 1, 2], [3], [4, 5]])
        #expect(sent.messages[1].count == 1 + WireLimits.default.maxPayloadFrames, "the heavy message, unchanged")
    }

    @Test("an append over the wire limits throws and holds nothing; what was held stays")
    func refusedAppendHoldsNothing() throws {
        var outbox = Outbox()
        try outbox.append(stop(0), payloads: [[1]])
        let tooMany = Array(repeating: [UInt8](), count: WireLimits.default.maxPayloadFrames + 1)
        #expect(throws: WireError.self) { try outbox.append(stop(1), payloads: tooMany) }
        let tooLarge = [[UInt8](repeating: 0, count: WireLimits.default.maxFrameBytes + 1)]
        #expect(throws: WireError.self) { try outbox.append(stop(2), payloads: tooLarge) }
        let longPath = EnvelopeHeader(kind: .stop, correlationID: 3, nodePath: String(repeating: "p", count: WireLimits.default.maxNodePathBytes + 1))
        #expect(throws: WireError.self) { try outbox.append(longPath, payloads: [[UInt8]]()) }
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.kinds == [.stop])
        #expect(sent.messages == [[try stop(0).encode(), [1]]], "only the message held before, byte for byte")
    }

    @Test("frames are handed over byte for byte, empty ones too, and a pre-encoded message keeps its kind")
    func framesArriveUnchanged() throws {
        var outbox = Outbox()
        let payloads: [[UInt8]] = [[], [0xFF], Array(0..<200)]
        try outbox.append(stop(0), payloads: payloads)
        let encoded = try Envelope(kind: .release, correlationID: 9, payloads: [[4, 2]]).encodeFrames()
        outbox.append(encoded)
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.carried == [[[try stop(0).encode()] + payloads, encoded]])

        var alone = Outbox()
        alone.append(encoded)
        var single = Sent()
        alone.send(codec: codec) { single.take($0) }
        #expect(single.kinds == [.release], "its kind read from its header")
        #expect(single.messages == [encoded])
    }

    @Test("an outgoing message counts its frames and bytes, flags every frame but the last as followed, and stops when asked")
    func outgoingMessageHandsOverItsFrames() throws {
        var outbox = Outbox()
        try outbox.append(stop(0), payloads: [[1, 2]])
        try outbox.append(stop(1), payloads: [[3]])
        var checked = false
        outbox.send(codec: codec) { message in
            let frames = message.frames
            #expect(message.kind == .batch)
            #expect(message.frameCount == frames.count)
            #expect(frames.count == 2 + 4, "batch header and layout, then two frames per message")
            #expect(message.byteCount == frames.reduce(0) { $0 + $1.count })
            var flags: [Bool] = []
            #expect(message.forEachFrame { _, more in flags.append(more); return true })
            #expect(flags == Array(repeating: true, count: frames.count - 1) + [false])
            var handed = 0
            #expect(!message.forEachFrame { _, _ in handed += 1; return handed < 3 }, "stopped after the third frame")
            #expect(handed == 3)
            checked = true
            return true
        }
        #expect(checked)
    }

    @Test("nothing held sends nothing; nothing closed leaves early; a cleared outbox sends only what is held after")
    func emptyOpenAndCleared() throws {
        var outbox = Outbox()
        var calls = 0
        outbox.send(codec: codec) { _ in calls += 1; return true }
        #expect(calls == 0)

        for number in 0..<10 { try outbox.append(stop(number), payloads: [[UInt8]]()) }
        outbox.sendClosedBatches(codec: codec) { _ in calls += 1; return true }
        #expect(calls == 0, "an open batch waits")
        #expect(!outbox.isEmpty)

        outbox.removeAll()
        #expect(outbox.isEmpty)
        try outbox.append(stop(42), payloads: [[UInt8]]())
        var sent = Sent()
        outbox.send(codec: codec) { sent.take($0) }
        #expect(sent.ids == [[42]])
    }

    @Test("closed batches leave with exactly their messages; the open one's messages follow in order")
    func closedBatchesKeepTheOpenOneIntact() throws {
        var outbox = Outbox()
        // Two-frame messages: 31 fill a batch (weight 62); the 32nd closes it.
        for number in 0..<40 { try outbox.append(stop(number), payloads: [[UInt8(number)]]) }
        var early = Sent()
        outbox.sendClosedBatches(codec: codec) { early.take($0) }
        #expect(early.ids == [(0..<31).map(UInt64.init)])
        #expect(!outbox.hasClosedBatch)
        for number in 40..<45 { try outbox.append(stop(number), payloads: [[UInt8(number)]]) }
        var rest = Sent()
        outbox.send(codec: codec) { rest.take($0) }
        #expect(rest.ids == [(31..<45).map(UInt64.init)])
        #expect(rest.carried[0].map { $0[1] } == (31..<45).map { [UInt8($0)] }, "each message's payload after the rebase")
    }
}
