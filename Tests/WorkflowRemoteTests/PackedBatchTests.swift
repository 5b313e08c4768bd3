import Testing
import WireProtocol
@testable import WorkflowRemote

/// The packed batch (protocol 6) without sockets: an outbox packing for a peer of protocol 6
/// hands over a pass's messages as one `packedBatch`, within its bounds, and `PackedBatch` reads
/// back exactly the messages held, in order; a malformed one is refused whole.
@Suite struct PackedBatchTests {
    let codec = BinaryWireCodec()

    /// What `send(codec:packing: .packed)` hands over: each ZeroMQ message's kind and the
    /// correlation ids of the messages it carries, read as a receiver reads them.
    func send(_ outbox: inout Outbox) throws -> [(kind: MessageKind, ids: [UInt64])] {
        var sent: [(MessageKind, [UInt64])] = []
        var failure: (any Error)?
        outbox.send(codec: codec, packing: .packed) { message in
            do {
                let envelope = try Envelope(frames: message.frames)
                sent.append((message.kind, try ids(in: envelope)))
            } catch {
                failure = error
            }
            return true
        }
        if let failure { throw failure }
        return sent
    }

    func ids(in envelope: Envelope) throws -> [UInt64] {
        guard envelope.kind == .packedBatch else { return [envelope.correlationID] }
        var ids: [UInt64] = []
        try #require(PackedBatch(envelope)).forEachMessage { frames in
            ids.append((try? Envelope(frames: frames))?.correlationID ?? .max)
            return true
        }
        return ids
    }

    /// Holds `count` UPDATEs numbered from `first`, each with one payload of its number's bytes.
    func hold(_ count: Int, from first: Int = 0, in outbox: inout Outbox) throws {
        for number in first..<(first + count) {
            let header = EnvelopeHeader(kind: .update, correlationID: UInt64(number), nodePath: "/n\(number)")
            try outbox.append(header, payloads: [[UInt8(number % 256), UInt8(number / 256)]])
        }
    }

    @Test("a slice's worth of updates goes as one packed batch, in order, byte for byte; a thousand go in four")
    func aSliceIsOneMessage() throws {
        var outbox = Outbox()
        try hold(Outbox.packedBatchLimit, in: &outbox)
        #expect(!outbox.hasClosedBatch(packing: .packed))
        #expect(outbox.hasClosedBatch(packing: .framed), "framed, the same messages fill nine batches")
        var sent: [[[UInt8]]] = []
        outbox.send(codec: codec, packing: .packed) { message in
            sent.append(message.frames)
            return true
        }
        #expect(sent.count == 1)
        #expect(sent[0].count == 3, "header, layout, and the one packed frame")
        let envelope = try Envelope(frames: sent[0])
        #expect(envelope.kind == .packedBatch)
        var number = 0
        try #require(PackedBatch(envelope)).forEachMessage { frames in
            let message = try? Envelope(frames: frames)
            #expect(message?.correlationID == UInt64(number))
            #expect(message?.nodePath == "/n\(number)")
            #expect(message?.payloads == [[UInt8(number % 256), UInt8(number / 256)]])
            number += 1
            return true
        }
        #expect(number == Outbox.packedBatchLimit)
        #expect(outbox.isEmpty)

        var thousand = Outbox()
        try hold(1_000, in: &thousand)
        let batches = try send(&thousand)
        #expect(batches.map(\.kind) == Array(repeating: .packedBatch, count: 4))
        #expect(batches.flatMap(\.ids) == (0..<1_000).map { UInt64($0) })
    }

    @Test("a packed batch carries at most 256 messages and 63 events' weight; a message alone goes as itself")
    func boundsHold() throws {
        var many = Outbox()
        try hold(Outbox.packedBatchLimit + 10, in: &many)
        #expect(many.hasClosedBatch(packing: .packed))
        let sent = try send(&many)
        #expect(sent.map(\.kind) == [.packedBatch, .packedBatch])
        #expect(sent.flatMap(\.ids) == (0..<UInt64(Outbox.packedBatchLimit + 10)).map { $0 })
        #expect(sent[0].ids.count == Outbox.packedBatchLimit)

        // Events weigh as in a framed batch: two EVENTs of 40 packed values do not share one.
        var events = Outbox()
        for id in 0..<2 {
            try events.append(EnvelopeHeader(kind: .event, correlationID: UInt64(id), nodePath: "/e"), payloads: [[1], [2]], packedValues: 40)
        }
        try hold(3, from: 10, in: &events)
        let eventBatches = try send(&events)
        #expect(eventBatches.map(\.kind) == [.event, .packedBatch])
        #expect(eventBatches.map(\.ids) == [[0], [1, 10, 11, 12]], "updates weigh nothing next to events")

        var single = Outbox()
        try hold(1, in: &single)
        #expect(try send(&single).map(\.kind) == [.update])
    }

    @Test("closed packed batches leave early and the open one waits; together they are what one send makes")
    func closedBatchesLeaveEarly() throws {
        var outbox = Outbox()
        try hold(Outbox.packedBatchLimit + 1, in: &outbox)
        var early: [UInt64] = []
        outbox.sendClosedBatches(codec: codec, packing: .packed) { message in
            early += (try? ids(in: Envelope(frames: message.frames))) ?? []
            return true
        }
        #expect(early == (0..<UInt64(Outbox.packedBatchLimit)).map { $0 })
        try hold(2, from: Outbox.packedBatchLimit + 1, in: &outbox)
        let rest = try send(&outbox)
        #expect(rest.flatMap(\.ids) == (UInt64(Outbox.packedBatchLimit)...UInt64(Outbox.packedBatchLimit + 2)).map { $0 })
    }

    @Test("a layout that does not add up, an empty message or a batch inside is refused whole")
    func malformedIsRefusedWhole() throws {
        let update = try EnvelopeHeader(kind: .update, correlationID: 1, nodePath: "/a").encode()
        let props: [UInt8] = [7, 7]
        func packed(_ counts: [UInt32], _ lengths: [UInt32], _ frames: [[UInt8]]) throws -> Envelope {
            Envelope(kind: .packedBatch, payloads: [try codec.encode(PackedBatchLayout(frameCounts: counts, frameLengths: lengths)), frames.flatMap { $0 }])
        }
        let lengths = [UInt32(update.count), 2]
        #expect(PackedBatch(try packed([2], lengths, [update, props])) != nil, "the well-formed one")
        #expect(PackedBatch(try packed([3], lengths, [update, props])) == nil, "counts over the lengths")
        #expect(PackedBatch(try packed([2], [UInt32(update.count), 3], [update, props])) == nil, "lengths over the bytes")
        #expect(PackedBatch(try packed([2, 0], lengths, [update, props])) == nil, "an empty message")
        let nested = try EnvelopeHeader(kind: .batch).encode()
        #expect(PackedBatch(try packed([2, 1], lengths + [UInt32(nested.count)], [update, props, nested])) == nil, "a batch inside")
        #expect(PackedBatch(Envelope(kind: .packedBatch, payloads: [[0xFF]])) == nil, "no packed frame")
    }
}
