import Foundation
import Testing
@testable import WireProtocol

@Suite("Envelope framing")
struct EnvelopeTests {
    @Test("Every kind round-trips through frames", arguments: MessageKind.allCases, CodecID.allCases)
    func roundTrip(kind: MessageKind, codec: CodecID) throws {
        let payload = try WireCodecs.codec(for: codec).encode(sampleMessage)
        let envelope = Envelope(
            kind: kind, codec: codec, correlationID: .max, sequence: 17, acknowledged: 16, epoch: 3,
            nodePath: "EmailBrowser:/InboxWorkflow:inbox 🙂", payloads: [payload, [], [1, 2, 3]])
        let frames = try envelope.encodeFrames()
        #expect(frames.count == 4)
        #expect(try Envelope(frames: frames) == envelope)
        // The borrowed-bytes path gives the same result.
        let decoded = try withRawFrames(frames) { raw in try Envelope(frames: raw) }
        #expect(decoded == envelope)
        let message = try WireCodecs.codec(for: decoded.codec).decode(Message.self, from: decoded.payloads[0])
        #expect(message == sampleMessage)
    }

    @Test("Header layout is 40 fixed big-endian bytes plus the path")
    func layout() throws {
        let header = EnvelopeHeader(
            kind: .outputs, codec: .json, correlationID: 0x0102_0304_0506_0708, sequence: 9, acknowledged: 0x0A,
            epoch: 0x0B0C, nodePath: "A")
        let bytes = try header.encode()
        #expect(bytes == [
            0x57, 0x46, 2, 7, 1, 0,
            1, 2, 3, 4, 5, 6, 7, 8,
            0, 0, 0, 0, 0, 0, 0, 9,
            0, 0, 0, 0, 0, 0, 0, 0x0A,
            0, 0, 0, 0, 0, 0, 0x0B, 0x0C,
            0, 1, 0x41,
        ])
        #expect(EnvelopeHeader.fixedSize + 1 == bytes.count)
    }

    @Test("Decoding into a reused envelope gives each message exactly, whatever came before")
    func decodeIntoReusedEnvelope() throws {
        let messages = [
            Envelope(kind: .rendering, correlationID: 1, sequence: 4, nodePath: "/Board/Remote<Counter>[a]", payloads: [[1, 2, 3]]),
            Envelope(kind: .rendering, correlationID: 2, sequence: 5, nodePath: "/Board/Remote<Counter>[b]", payloads: [[4]]),
            Envelope(kind: .update, correlationID: 2, sequence: 6, nodePath: "/Board/Remote<Counter>[b]", payloads: []),
            Envelope(kind: .outputs, correlationID: 1, acknowledged: 9, nodePath: "/Board/Remote<Counter>[a]", payloads: [[5], [], [6, 7]]),
            Envelope(kind: .heartbeat),
        ]
        var reused = Envelope(kind: .heartbeat)
        for message in messages + messages.reversed() {
            let frames = try message.encodeFrames()
            try frames.withUnsafeRawBuffers { try reused.decode(frames: $0) }
            #expect(reused == message)
        }
        // A malformed message leaves no payloads of the one before behind.
        #expect(throws: WireError.missingHeader) { try reused.decode(frames: []) }
        #expect(reused.payloads.isEmpty)
    }

    @Test("Kinds have stable wire values")
    func kindValues() {
        #expect(MessageKind.allCases.map(\.rawValue) == Array(1...16))
        #expect(MessageKind(rawValue: 0) == nil)
        #expect(CodecID.binary.rawValue == 0 && CodecID.json.rawValue == 1)
        #expect(CodecID.default == .binary)
    }

    @Test("Errors describe themselves")
    func descriptions() {
        #expect(WireError.unknownKind(99).description == "unknown message kind 99")
        #expect(WireError.keyNotFound(key: "b", codingPath: "").description.contains("<root>"))
        #expect(WireError.badMagic(0x1234).description.contains("0x1234"))
    }
}

/// Runs `body` with the frames as borrowed raw buffers, as the ZeroMQ layer would hand them.
func withRawFrames<R>(_ frames: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) throws -> R {
    func go(_ index: Int, _ raws: [UnsafeRawBufferPointer]) throws -> R {
        if index == frames.count { return try body(raws) }
        return try frames[index].withUnsafeBytes { raw in try go(index + 1, raws + [raw]) }
    }
    return try go(0, [])
}

extension Array where Element == [UInt8] {
    /// Calls `body` with every frame borrowed, as a transport hands them over.
    func withUnsafeRawBuffers<R>(_ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
        var buffers: [UnsafeRawBufferPointer] = []
        func next(_ index: Int) throws -> R {
            guard index < count else { return try body(buffers) }
            return try self[index].withUnsafeBytes { raw in
                buffers.append(raw)
                return try next(index + 1)
            }
        }
        return try next(0)
    }
}
