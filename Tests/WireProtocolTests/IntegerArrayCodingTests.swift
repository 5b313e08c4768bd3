import Foundation
import Testing
@testable import WireProtocol

/// `[UInt64]` and `[UInt32]` take a fast path in the binary codec (the sequence numbers of the
/// remote runtime's EVENT and OUTPUTS headers): it must write and read exactly what the generic
/// unkeyed-container path does, so peers on either path understand each other.
@Suite("Binary codec: integer arrays")
struct IntegerArrayCodingTests {
    /// Lengths around the one-byte count boundary, values around the varint byte boundaries.
    static let samples: [[UInt64]] = [
        [], [0], [1, 2, 3], Array(0..<127), Array(0..<128), Array(0..<300).map { $0 * 1_000_003 },
        [127, 128, 16_383, 16_384, UInt64(UInt32.max), UInt64.max],
    ]

    @Test("[UInt64] and [UInt32] encode to the same bytes as the generic path, and decode from them")
    func sameBytes() throws {
        let codec = BinaryWireCodec()
        for values in Self.samples {
            let fast = try codec.encode(values)
            #expect(fast == (try codec.encode(GenericUnsigned(values: values))))
            #expect(try codec.decode([UInt64].self, from: fast) == values)
            #expect(try codec.decode(GenericUnsigned.self, from: fast).values == values)
            let narrow = values.compactMap { UInt32(exactly: $0) }
            let fastNarrow = try codec.encode(narrow)
            #expect(fastNarrow == (try codec.encode(GenericUnsigned(values: narrow.map(UInt64.init)))))
            #expect(try codec.decode([UInt32].self, from: fastNarrow) == narrow)
        }
    }

    @Test("Inside a keyed container, the arrays round-trip with the fields around them")
    func nested() throws {
        let header = Header(first: 7, causes: Array(1...70), ordinals: Array(repeating: 0, count: 70), last: "end")
        let codec = BinaryWireCodec()
        #expect(try codec.decode(Header.self, from: try codec.encode(header)) == header)
    }

    @Test("A value too large for UInt32, a wrong element tag and a truncated array are errors")
    func malformed() throws {
        let codec = BinaryWireCodec()
        let wide = try codec.encode([UInt64(UInt32.max) + 1])
        #expect(throws: WireError.self) { try codec.decode([UInt32].self, from: wide) }
        let strings = try codec.encode(["a", "b"])
        #expect(throws: WireError.self) { try codec.decode([UInt64].self, from: strings) }
        let truncated = Array(try codec.encode([UInt64](1...10)).dropLast())
        #expect(throws: WireError.self) { try codec.decode([UInt64].self, from: truncated) }
        let negative = try codec.encode([-1])
        #expect(throws: WireError.self) { try codec.decode([UInt64].self, from: negative) }
    }

    @Test("An array longer than the collection limit is refused when encoding")
    func limit() {
        var limits = WireLimits.default
        limits.maxCollectionCount = 4
        let codec = BinaryWireCodec(limits: limits)
        #expect(throws: WireError.self) { try codec.encode([UInt64](1...5)) }
        #expect(throws: WireError.self) { try codec.encode([UInt32](1...5)) }
    }

    @Test("userInfo set on a copy (with(userInfo:)) reaches its encoders and decoders")
    func userInfoOnCopy() throws {
        let key = try #require(SeesUserInfo.key)
        let codec = BinaryWireCodec().with(userInfo: [key: "copy-3"])
        let decoded = try codec.decode(SeesUserInfo.self, from: try codec.encode(SeesUserInfo(seen: "")))
        #expect(decoded.seen == "copy-3|copy-3")
        #expect(try BinaryWireCodec().decode(SeesUserInfo.self, from: try BinaryWireCodec().encode(SeesUserInfo(seen: ""))).seen == "none|none")
    }
}

/// Unsigned integers written and read element by element through an unkeyed container: the
/// generic path the fast one must match.
private struct GenericUnsigned: Codable {
    var values: [UInt64]

    init(values: [UInt64]) { self.values = values }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        values = []
        while !container.isAtEnd { values.append(try container.decode(UInt64.self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for value in values { try container.encode(value) }
    }
}

private struct Header: Codable, Equatable {
    var first: UInt64
    var causes: [UInt64]
    var ordinals: [UInt32]
    var last: String
}
