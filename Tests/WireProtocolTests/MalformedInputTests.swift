import Foundation
import Testing
@testable import WireProtocol

@Suite("Malformed input yields typed errors, never traps")
struct MalformedInputTests {
    let binary = BinaryWireCodec()

    func header(_ envelope: Envelope = Envelope(kind: .event, nodePath: "A:/B:b")) throws -> [UInt8] {
        try envelope.header.encode()
    }

    func decodeEnvelope(_ frames: [[UInt8]], limits: WireLimits = .default) -> WireError? {
        do {
            _ = try Envelope(frames: frames, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    func decodeBinary<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], codec: BinaryWireCodec = BinaryWireCodec()) -> WireError? {
        do {
            _ = try codec.decode(type, from: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("No frames → missingHeader")
    func noFrames() {
        #expect(decodeEnvelope([]) == .missingHeader)
    }

    @Test("Every truncation of a header → truncated")
    func truncatedHeader() throws {
        let full = try header()
        for length in 0..<full.count {
            let error = decodeEnvelope([Array(full.prefix(length))])
            guard case .truncated = error else {
                Issue.record("length \(length): \(String(describing: error))")
                continue
            }
        }
    }

    @Test("Wrong magic → badMagic")
    func badMagic() throws {
        var bytes = try header()
        bytes[0] = 0x58
        #expect(decodeEnvelope([bytes]) == .badMagic(0x5846))
    }

    @Test("Unknown version → unsupportedVersion", arguments: [UInt8(1), 3])
    func version(byte: UInt8) throws {
        var bytes = try header()
        bytes[2] = byte
        #expect(decodeEnvelope([bytes]) == .unsupportedVersion(byte))
    }

    @Test("Unknown kind → unknownKind", arguments: [UInt8(0), 17, 200, 255])
    func kind(byte: UInt8) throws {
        var bytes = try header()
        bytes[3] = byte
        #expect(decodeEnvelope([bytes]) == .unknownKind(byte))
    }

    @Test("Unknown codec → unknownCodec")
    func codec() throws {
        var bytes = try header()
        bytes[4] = 7
        #expect(decodeEnvelope([bytes]) == .unknownCodec(7))
    }

    @Test("Reserved flags → unsupportedFlags")
    func flags() throws {
        var bytes = try header()
        bytes[5] = 0x80
        #expect(decodeEnvelope([bytes]) == .unsupportedFlags(0x80))
    }

    @Test("Trailing bytes after the header path → trailingBytes")
    func headerTrailing() throws {
        let bytes = try header() + [1, 2]
        #expect(decodeEnvelope([bytes]) == .trailingBytes(count: 2, context: "header"))
    }

    @Test("Node path longer than the limit → lengthTooLarge, on decode and on encode")
    func longPath() throws {
        let limits = WireLimits(maxNodePathBytes: 4)
        let bytes = try header()
        #expect(decodeEnvelope([bytes], limits: limits) == .lengthTooLarge(declared: 6, limit: 4, context: "node path"))
        #expect(throws: WireError.lengthTooLarge(declared: 6, limit: 4, context: "node path")) {
            try Envelope(kind: .stop, nodePath: "A:/B:b").encodeFrames(limits: limits)
        }
    }

    @Test("Node path length past the frame → truncated")
    func pathPastFrame() throws {
        var bytes = try header()
        bytes[EnvelopeHeader.fixedSize - 1] = 200
        guard case .truncated = decodeEnvelope([bytes]) else { Issue.record("expected truncated"); return }
    }

    @Test("Invalid UTF-8 in the node path → invalidUTF8")
    func badPath() throws {
        var bytes = try header()
        bytes[bytes.count - 1] = 0xFF
        #expect(decodeEnvelope([bytes]) == .invalidUTF8(context: "node path"))
    }

    @Test("Too many or too large payload frames → lengthTooLarge")
    func frameLimits() throws {
        let limits = WireLimits(maxFrameBytes: 64, maxPayloadFrames: 2)
        let bytes = try header()
        guard case .lengthTooLarge = decodeEnvelope([bytes, [], [], []], limits: limits) else {
            Issue.record("expected lengthTooLarge for frame count"); return
        }
        guard case .lengthTooLarge = decodeEnvelope([bytes, [UInt8](repeating: 0, count: 65)], limits: limits) else {
            Issue.record("expected lengthTooLarge for frame size"); return
        }
    }

    @Test("Truncated payloads → truncated")
    func truncatedPayload() throws {
        let full = try binary.encode(sampleMessage)
        for length in 0..<full.count {
            let error = decodeBinary(Message.self, Array(full.prefix(length)))
            guard case .truncated = error else {
                Issue.record("length \(length): \(String(describing: error))")
                continue
            }
        }
    }

    @Test("Huge declared lengths fail fast without allocating", arguments: [
        // string of 2^62 bytes
        [BinaryTag.string.rawValue, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40],
        // bytes of 2^40
        [BinaryTag.bytes.rawValue, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20],
        // unkeyed container with 2^50 elements
        [BinaryTag.unkeyed.rawValue, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
        // keyed container with 2^50 entries
        [BinaryTag.keyed.rawValue, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
    ] as [[UInt8]])
    func hugeLengths(bytes: [UInt8]) {
        for type in [String.self, Data.self, [Int].self, [String: Int].self] as [any Decodable.Type] {
            let error = decodeBinary(type, bytes)
            switch error {
            case .lengthTooLarge(let declared, let limit, _):
                #expect(declared > UInt64(limit))
            case .typeMismatch:
                break  // a different tag than the type wants: rejected before reading the length
            default:
                Issue.record("\(type): \(String(describing: error))")
            }
        }
    }

    @Test("Length within limits but past the bytes present → truncated")
    func lengthPastEnd() {
        #expect(decodeBinary(String.self, [BinaryTag.string.rawValue, 100, 0x41])
            == .truncated(expected: 100, available: 1, context: "string length"))
        guard case .truncated = decodeBinary([Int].self, [BinaryTag.unkeyed.rawValue, 100, 0]) else {
            Issue.record("expected truncated"); return
        }
    }

    @Test("Invalid UTF-8 in a string value and in a key → invalidUTF8")
    func badUTF8() {
        #expect(decodeBinary(String.self, [BinaryTag.string.rawValue, 2, 0xC3, 0x28]) == .invalidUTF8(context: "string"))
        // {<new key 0xFF>: 1}
        let keyed: [UInt8] = [BinaryTag.keyed.rawValue, 1, 0, 1, 0xFF, BinaryTag.unsigned.rawValue, 1]
        #expect(decodeBinary([String: Int].self, keyed) == .invalidUTF8(context: "key"))
    }

    @Test("Type mismatches name expected and found types and the path", arguments: allCodecs.indices)
    func typeMismatch(codec: Int) throws {
        let codec = allCodecs[codec]
        struct Wrote: Codable { var value: String }
        struct Wants: Codable { var value: Int }
        do {
            _ = try codec.decode(Wants.self, from: try codec.encode(Wrote(value: "x")))
            Issue.record("decoded a String as an Int")
        } catch {
            guard case let .typeMismatch(expected, _, path) = error else {
                Issue.record("\(error)"); return
            }
            #expect(expected == "Int")
            #expect(path == "value")
        }
    }

    @Test("Binary type mismatch reports the found type")
    func binaryMismatchDetail() throws {
        struct Wrote: Codable { var list: [String] }
        struct Wants: Codable { var list: [Bool] }
        let bytes = try binary.encode(Wrote(list: ["a"]))
        #expect(decodeBinary(Wants.self, bytes) == .typeMismatch(expected: "Bool", found: "String", codingPath: "list[0]"))
        #expect(decodeBinary(Int.self, try binary.encode(["a": 1]))
            == .typeMismatch(expected: "Int", found: "keyed container", codingPath: ""))
    }

    @Test("Out-of-range integers → valueOutOfRange")
    func outOfRange() throws {
        #expect(throws: WireError.self) { try binary.decode(UInt8.self, from: try binary.encode(300)) }
        guard case .valueOutOfRange = decodeBinary(Int8.self, try binary.encode(-129)) else {
            Issue.record("expected valueOutOfRange"); return
        }
        guard case .valueOutOfRange = decodeBinary(UInt64.self, try binary.encode(-1)) else {
            Issue.record("expected valueOutOfRange"); return
        }
        guard case .valueOutOfRange = decodeBinary(Int64.self, try binary.encode(UInt128.max)) else {
            Issue.record("expected valueOutOfRange"); return
        }
    }

    @Test("Missing key → keyNotFound", arguments: allCodecs.indices)
    func missingKey(codec: Int) throws {
        let codec = allCodecs[codec]
        struct Wrote: Codable { var a: Int }
        struct Wants: Codable { var a: Int; var b: Int }
        do {
            _ = try codec.decode(Wants.self, from: try codec.encode(Wrote(a: 1)))
            Issue.record("decoded a missing key")
        } catch {
            #expect(error == .keyNotFound(key: "b", codingPath: ""))
        }
    }

    @Test("Trailing bytes after the value → trailingBytes")
    func trailing() throws {
        let bytes = try binary.encode(sampleMessage) + [0, 0, 0]
        #expect(decodeBinary(Message.self, bytes) == .trailingBytes(count: 3, context: "binary payload"))
    }

    @Test("Nesting too deep → nestingTooDeep, on decode and on encode")
    func tooDeep() throws {
        let limits = WireLimits(maxDepth: 16)
        let codec = BinaryWireCodec(limits: limits)
        var deep: Attachment = .none
        for _ in 0..<12 { deep = .nested([deep]) }  // 3 containers per level
        #expect(throws: WireError.nestingTooDeep(limit: 16)) { try codec.encode(deep) }
        let bytes = try binary.encode(deep)
        #expect(decodeBinary(Attachment.self, bytes, codec: codec) == .nestingTooDeep(limit: 16))
        // A hand-made stack of 10 000 nested arrays never overflows the stack.
        var hostile: [UInt8] = []
        for _ in 0..<10_000 { hostile += [BinaryTag.unkeyed.rawValue, 1] }
        hostile.append(BinaryTag.null.rawValue)
        #expect(decodeBinary(Attachment.self, hostile) == .typeMismatch(expected: "keyed container", found: "unkeyed container", codingPath: ""))
        #expect(decodeBinary(NestedList.self, hostile) == .nestingTooDeep(limit: 64))
        #expect(decodeBinary([String: Int].self, [BinaryTag.keyed.rawValue, 2, 0, 1, 0x61] + hostile) == .nestingTooDeep(limit: 64))
    }

    @Test("Unknown type tags and bad key references → malformed")
    func malformedStructure() {
        guard case .malformed = decodeBinary([String: Int].self, [BinaryTag.keyed.rawValue, 1, 5, BinaryTag.unsigned.rawValue, 1]) else {
            Issue.record("expected malformed key reference"); return
        }
        // An entry whose value has an unknown tag, skipped while indexing for a later key.
        let bytes: [UInt8] = [BinaryTag.keyed.rawValue, 2, 0, 1, 0x78, 0x7F, 0, 1, 0x79, BinaryTag.true.rawValue]
        struct Wants: Decodable { var y: Bool }
        guard case .malformed = decodeBinary(Wants.self, bytes) else {
            Issue.record("expected malformed tag"); return
        }
        guard case .malformed = decodeBinary(Int.self, [BinaryTag.signed.rawValue] + [UInt8](repeating: 0xFF, count: 30)) else {
            Issue.record("expected malformed varint"); return
        }
    }

    @Test("Oversized payload frame → lengthTooLarge before parsing")
    func oversizedPayload() {
        let codec = BinaryWireCodec(limits: WireLimits(maxFrameBytes: 8))
        #expect(decodeBinary(String.self, [UInt8](repeating: 0, count: 9), codec: codec)
            == .lengthTooLarge(declared: 9, limit: 8, context: "binary payload"))
    }
}

/// Arrays of arrays of any depth, to hit the depth limit.
struct NestedList: Decodable {
    var inner: [NestedList] = []
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { inner.append(try container.decode(NestedList.self)) }
    }
}
