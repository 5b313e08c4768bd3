import Testing
import WireProtocol
@testable import WorkflowRemote

/// The outbox without sockets: what it sends, unpacked as a receiver does, is the messages held,
/// in order, each exactly once, in batches within the frame limit.
@Suite struct OutboxTests {
    let codec = BinaryWireCodec()

    /// Holds `count` one-payload UPDATE messages numbered from `first` (the number in the
    /// correlation id and in the payload).
    func hold(_ count: Int, from first: Int = 0, in outbox: inout Outbox) throws {
        for number in first..<(first + count) {
            let header = EnvelopeHeader(kind: .update, correlationID: UInt64(number), nodePath: "/n")
            try outbox.append(header, payloads: [[UInt8(number % 256), UInt8(number / 256)]])
        }
    }

    /// The ZeroMQ messages `transmit` got, unpacked into the messages they carry: the numbers.
    func unpack(_ sent: [[[UInt8]]]) throws -> [Int] {
        var numbers: [Int] = []
        for frames in sent {
            let envelope = try Envelope(frames: frames)
            let messages = envelope.kind == .batch ? try #require(Outbox.split(envelope)) : [frames]
            for message in messages {
                numbers.append(Int(try Envelope(frames: message).correlationID))
            }
        }
        return numbers
    }

    func collect(_ message: OutgoingMessage, into sent: inout [[[UInt8]]]) {
        var frames: [[UInt8]] = []
        message.forEachFrame { frame, _ in
            frames.append(Array(frame))
            return true
        }
        sent.append(frames)
    }

    @Test("one message goes as itself; many go in batches, in order, none over the frame limit")
    func batchesKeepOrderWithinTheLimit() throws {
        var single = Outbox()
        try hold(1, in: &single)
        var sent: [[[UInt8]]] = []
        single.send(codec: codec) { collect($0, into: &sent); return true }
        #expect(sent.count == 1)
        #expect(try Envelope(frames: sent[0]).kind == .update)

        var outbox = Outbox()
        try hold(500, in: &outbox)
        sent = []
        outbox.send(codec: codec) { collect($0, into: &sent); return true }
        #expect(try unpack(sent) == Array(0..<500))
        #expect(sent.count > 1)
        #expect(sent.allSatisfy { $0.count - 1 <= WireLimits.default.maxPayloadFrames }, "a batch over the frame limit")
        #expect(outbox.isEmpty)
    }

    @Test("closed batches leave early; the open one waits for more; together they are what one send makes")
    func closedBatchesLeaveEarly() throws {
        var outbox = Outbox()
        var sent: [[[UInt8]]] = []
        try hold(100, in: &outbox)
        #expect(outbox.hasClosedBatch)
        outbox.sendClosedBatches(codec: codec) { collect($0, into: &sent); return true }
        let early = try unpack(sent)
        #expect(!early.isEmpty && early == Array(0..<early.count))
        #expect(!outbox.isEmpty, "the open batch is kept")
        try hold(50, from: 100, in: &outbox)
        outbox.send(codec: codec) { collect($0, into: &sent); return true }
        #expect(try unpack(sent) == Array(0..<150))
    }

    @Test("a transmit that finds the peer gone stops the send and leaves the outbox empty")
    func goneStopsAndEmpties() throws {
        var outbox = Outbox()
        try hold(300, in: &outbox)
        var calls = 0
        outbox.send(codec: codec) { _ in
            calls += 1
            return false
        }
        #expect(calls == 1)
        #expect(outbox.isEmpty)
    }

    @Test("a malformed batch layout is refused, never half read")
    func malformedLayoutIsRefused() throws {
        var outbox = Outbox()
        try hold(3, in: &outbox)
        var sent: [[[UInt8]]] = []
        outbox.send(codec: codec) { collect($0, into: &sent); return true }
        var frames = try #require(sent.first)
        frames.removeLast()  // the layout counts one frame more than there is
        #expect(Outbox.split(try Envelope(frames: frames)) == nil)
    }
}
