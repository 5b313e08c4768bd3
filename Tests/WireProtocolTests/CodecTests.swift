import Foundation
import Testing
@testable import WireProtocol

@Suite("Codec selection, userInfo and size")
struct CodecTests {
    @Test("codec(for:) returns the announced codec")
    func selection() {
        for id in CodecID.allCases { #expect(WireCodecs.codec(for: id).id == id) }
        #expect(WireCodecs.default.id == .binary)
    }

    @Test("userInfo reaches encoders and decoders of both codecs", arguments: CodecID.allCases)
    func userInfo(id: CodecID) throws {
        let key = try #require(CodingUserInfoKey(rawValue: "test.transport"))
        let codec = WireCodecs.codec(for: id, userInfo: [key: "transport-7"])
        let decoded = try codec.decode(SeesUserInfo.self, from: try codec.encode(SeesUserInfo(seen: "")))
        #expect(decoded.seen == "transport-7|transport-7")
        let plain = WireCodecs.codec(for: id)
        #expect(plain.with(userInfo: [key: "x"]).userInfo.count == 1)
    }

    @Test("Errors thrown by Codable implementations become WireError", arguments: CodecID.allCases)
    func foreignErrors(id: CodecID) {
        let codec = WireCodecs.codec(for: id)
        #expect(throws: WireError.valueError("refused")) { try codec.encode(Refuses()) }
    }

    @Test("Binary is smaller than JSON for a representative struct, and much smaller for a batch")
    func size() throws {
        let binary = try BinaryWireCodec().encode(sampleMessage)
        let json = try JSONWireCodec().encode(sampleMessage)
        #expect(binary.count < json.count, "binary \(binary.count) B, JSON \(json.count) B")
        // Keys are interned per message, so repeated structs cost only their values.
        let inbox = Inbox(owner: "ada", messages: Array(repeating: sampleMessage, count: 20), unread: 3, selection: 0)
        let binaryInbox = try BinaryWireCodec().encode(inbox)
        let jsonInbox = try JSONWireCodec().encode(inbox)
        #expect(binaryInbox.count * 10 < jsonInbox.count * 7, "binary \(binaryInbox.count) B, JSON \(jsonInbox.count) B")
    }

    @Test("Repeated keys are interned: the second struct costs no key text")
    func interning() throws {
        let one = try BinaryWireCodec().encode([Address(name: "a", email: "b", tags: [])])
        let two = try BinaryWireCodec().encode([Address(name: "a", email: "b", tags: []), Address(name: "a", email: "b", tags: [])])
        // Second element: tag + count, then 3 × 1-byte key reference + value ("a", "b", []).
        #expect(two.count - one.count == 2 + (1 + 3) + (1 + 3) + (1 + 2))
    }

    @Test("The worked examples in docs/WIRE-PROTOCOL.md §6.4 are exact")
    func documentedBytes() throws {
        let codec = BinaryWireCodec()
        let address = Address(name: "a", email: "b", tags: [])
        let one: [UInt8] = [
            0x09, 0x03, 0x00, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x07, 0x01, 0x61,
            0x00, 0x05, 0x65, 0x6d, 0x61, 0x69, 0x6c, 0x07, 0x01, 0x62, 0x00, 0x04, 0x74, 0x61, 0x67, 0x73, 0x0a, 0x00,
        ]
        #expect(try codec.encode(address) == one)
        #expect(try codec.encode([address, address]) == [0x0a, 0x02] + one + [0x09, 0x03, 0x01, 0x07, 0x01, 0x61, 0x02, 0x07, 0x01, 0x62, 0x03, 0x0a, 0x00])
        #expect(try codec.encode(-1) == [0x04, 0x01])
        #expect(try codec.encode(UInt16(300)) == [0x03, 0xac, 0x02])
        #expect(try codec.encode(1.5) == [0x06, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0])
        #expect(try codec.encode(Data([1, 2])) == [0x08, 0x02, 0x01, 0x02])
        #expect(try codec.encode([1, nil] as [Int?]) == [0x0a, 0x02, 0x04, 0x02, 0x00])
    }

    @Test("wireRoundTrip returns the value and the encoded size")
    func benchmarkHelper() throws {
        let result = try wireRoundTrip(sampleMessage, through: BinaryWireCodec())
        #expect(result.value == sampleMessage)
        #expect(result.byteCount == (try BinaryWireCodec().encode(sampleMessage)).count)
    }

    @Test("Encoders reject containers written out of nesting order (binary) but stay safe")
    func outOfOrderEncoding() throws {
        #expect(throws: WireError.self) { try BinaryWireCodec().encode(Interleaves()) }
        let json = try JSONWireCodec().encode(Interleaves())
        #expect(!json.isEmpty)
    }

    @Test("A value that encodes nothing decodes as an empty keyed container")
    func emptyValue() throws {
        let codec = BinaryWireCodec()
        #expect(try codec.encode(Empty()) == [BinaryTag.keyed.rawValue, 0])
        _ = try codec.decode(Empty.self, from: try codec.encode(Empty()))
    }
}

struct Empty: Codable {
    func encode(to encoder: any Encoder) throws {}
    init() {}
    init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: SeesUserInfo.Keys.self) }
}

struct Refuses: Encodable {
    struct Refusal: Error, CustomStringConvertible { var description: String { "refused" } }
    func encode(to encoder: any Encoder) throws { throw Refusal() }
}

struct Interleaves: Encodable {
    enum Keys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Keys.self)
        var inner = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try outer.encode(1, forKey: .b)
        try inner.encode(2, forKey: .c)
    }
}

struct SeesUserInfo: Codable {
    var seen: String
    enum Keys: String, CodingKey { case seen }
    static let key = CodingUserInfoKey(rawValue: "test.transport")
    init(seen: String) { self.seen = seen }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        let info = Self.key.flatMap { encoder.userInfo[$0] as? String } ?? "none"
        try container.encode(info, forKey: .seen)
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let info = Self.key.flatMap { decoder.userInfo[$0] as? String } ?? "none"
        seen = try container.decode(String.self, forKey: .seen) + "|" + info
    }
}
