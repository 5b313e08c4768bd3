import Foundation
import Testing
@testable import WireProtocol

/// Coding with reused storage (`WireCodingScratch`) gives exactly what coding without it gives,
/// message after message, whatever the previous message left behind.
@Suite("Coder storage reused across messages")
struct CodingScratchTests {
    struct Screen: Codable, Equatable {
        var title: String
        var count: Int
        var tags: [String]
        var nested: [String: Int]
    }

    @Test("Encoding and decoding with a scratch match the codec without one", arguments: CodecID.allCases)
    func sameBytesAndValues(id: CodecID) throws {
        let codec = WireCodecs.codec(for: id)
        let scratch = WireCodingScratch()
        let values = (0..<5).map { index in
            Screen(title: "screen \(index)", count: index, tags: Array(repeating: "t", count: index), nested: ["k\(index)": index])
        }
        for value in values {
            let bytes = try codec.encode(value, reusing: scratch)
            // JSON's key order is its encoder's, not fixed: the binary codec's bytes are.
            if id == .binary { #expect(bytes == (try codec.encode(value))) }
            let decoded = try bytes.withUnsafeBytes { raw in
                Result { () throws(WireError) in try codec.decode(Screen.self, from: raw, reusing: scratch) }
            }.get()
            #expect(decoded == value)
        }
    }

    struct Header: Codable, Equatable {
        var sequences: [UInt64]
        var indexes: [UInt32]
        var label: String
    }

    /// The coders allocate their key tables and container stack on the first key or container
    /// and keep them through `reset()`: a reused coder must neither keep the previous message's
    /// keys nor miss its tables when a message without keys came in between.
    @Test("Keyed, scalar and integer-array messages in turn code as with fresh coders")
    func keysNeverStale() throws {
        let codec = BinaryWireCodec()
        let scratch = WireCodingScratch()
        func roundTrip<T: Codable & Equatable>(_ value: T) throws {
            let bytes = try codec.encode(value, reusing: scratch)
            #expect(bytes == (try codec.encode(value)))
            let decoded = try bytes.withUnsafeBytes { raw in
                Result { () throws(WireError) in try codec.decode(T.self, from: raw, reusing: scratch) }
            }.get()
            #expect(decoded == value)
        }
        for round in 0..<3 {
            try roundTrip(42 + round)
            try roundTrip(Screen(title: "s\(round)", count: round, tags: ["x"], nested: ["a\(round)": 1, "b": 2]))
            try roundTrip(UInt64(round))
            try roundTrip(Header(sequences: [1, 2, UInt64(round)], indexes: [7, UInt32(round)], label: "h"))
            try roundTrip([UInt64](repeating: 9, count: round))
            try roundTrip(["only": round])
        }
    }

    @Test("A failed encode or decode leaves the scratch fit for the next message")
    func afterFailures() throws {
        let codec = BinaryWireCodec()
        let scratch = WireCodingScratch()
        #expect(throws: WireError.valueError("refused")) { try codec.encode(Refuses(), reusing: scratch) }
        let value = Screen(title: "after", count: 1, tags: [], nested: [:])
        let bytes = try codec.encode(value, reusing: scratch)
        #expect(bytes == (try codec.encode(value)))
        let truncated = Array(bytes.dropLast())
        #expect(throws: WireError.self) {
            try truncated.withUnsafeBytes { raw in
                Result { () throws(WireError) in try codec.decode(Screen.self, from: raw, reusing: scratch) }
            }.get()
        }
        let decoded = try bytes.withUnsafeBytes { raw in
            Result { () throws(WireError) in try codec.decode(Screen.self, from: raw, reusing: scratch) }
        }.get()
        #expect(decoded == value)
    }

    @Test("A value that codes another message with the same scratch meanwhile gets its own coder")
    func nestedUse() throws {
        let codec = BinaryWireCodec()
        let scratch = WireCodingScratch()
        let inner = Screen(title: "inner", count: 2, tags: ["a"], nested: [:])
        let outer = EncodesInside(scratch: scratch, inner: inner)
        let bytes = try codec.encode(outer, reusing: scratch)
        #expect(bytes == (try codec.encode(EncodesInside(scratch: WireCodingScratch(), inner: inner))))
        let decoded = try codec.decode(EncodesInside.Carried.self, from: bytes)
        #expect(try codec.decode(Screen.self, from: decoded.innerBytes) == inner)
    }

    @Test("userInfo reaches a reused coder, and the next message does not see it")
    func userInfo() throws {
        let key = try #require(SeesUserInfo.key)
        let scratch = WireCodingScratch()
        let with = BinaryWireCodec(userInfo: [key: "ctx"])
        let without = BinaryWireCodec()
        let first = try with.encode(SeesUserInfo(seen: ""), reusing: scratch)
        let second = try without.encode(SeesUserInfo(seen: ""), reusing: scratch)
        #expect(try without.decode(SeesUserInfo.self, from: first).seen == "ctx|none")
        #expect(try without.decode(SeesUserInfo.self, from: second).seen == "none|none")
    }
}

/// Encodes another message with the codec and scratch its encoder is using, while it encodes.
private struct EncodesInside: Encodable {
    let scratch: WireCodingScratch
    let inner: CodingScratchTests.Screen

    struct Carried: Decodable { var innerBytes: [UInt8] }
    enum Keys: String, CodingKey { case innerBytes }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(try BinaryWireCodec().encode(inner, reusing: scratch), forKey: .innerBytes)
    }
}
