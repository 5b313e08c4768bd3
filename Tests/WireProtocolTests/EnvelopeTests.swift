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

    @Test("Kinds have stable wire values")
    func kindValues() {
        #expect(MessageKind.allCases.map(\.rawValue) == Array(1...14))
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
