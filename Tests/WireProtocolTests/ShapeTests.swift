import Foundation
import Testing
@testable import WireProtocol

let shapeStrings: [String] = ["", "plain", "émoji 🙂🏳️‍🌈", "e\u{301} combining", "nul\0inside\0", "日本語", String(repeating: "x", count: 300)]

@Suite("Codable shapes round-trip through both codecs")
struct ShapeTests {
    @Test("Strings", arguments: allCodecs.indices, shapeStrings)
    func strings(codec: Int, string: String) throws {
        #expect(try roundTrip(Holder(value: string), allCodecs[codec]) == Holder(value: string))
        #expect(try roundTrip(string, allCodecs[codec]) == string)
    }

    @Test("Integer extremes", arguments: allCodecs.indices)
    func integerExtremes(codec: Int) throws {
        let codec = allCodecs[codec]
        for value in [Int64.min, Int64.max, 0, -1, 1, 63, -64, 64, -65] {
            #expect(try roundTrip(Holder(value: value), codec).value == value)
        }
        for value in [UInt64.max, 0, 127, 128, 16383, 16384] {
            #expect(try roundTrip(Holder(value: value), codec).value == value)
        }
        for value in [Int8.min, Int8.max] { #expect(try roundTrip(value, codec) == value) }
    }

    @Test("128-bit integers (binary)")
    func int128() throws {
        let codec = BinaryWireCodec()
        for value in [Int128.min, Int128.max, 0, -1, Int128(Int64.min) - 1] {
            #expect(try roundTrip(Holder(value: value), codec).value == value)
        }
        for value in [UInt128.max, 0, UInt128(UInt64.max) + 1] {
            #expect(try roundTrip([value], codec) == [value])
        }
    }

    @Test("Floats including NaN and infinities", arguments: allCodecs.indices)
    func floats(codec: Int) throws {
        let codec = allCodecs[codec]
        for value in [0.0, -0.0, 1.5, -.infinity, .infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .pi] {
            let decoded = try roundTrip(Holder(value: value), codec).value
            #expect(decoded == value && decoded.sign == value.sign)
        }
        #expect(try roundTrip(Holder(value: Double.nan), codec).value.isNaN)
        #expect(try roundTrip(Holder(value: Float.nan), codec).value.isNaN)
        for value: Float in [0, 3.25, -.infinity, .greatestFiniteMagnitude] {
            #expect(try roundTrip(Holder(value: value), codec).value == value)
        }
    }

    @Test("Bools, optionals and nested optionals", arguments: allCodecs.indices)
    func optionals(codec: Int) throws {
        let codec = allCodecs[codec]
        #expect(try roundTrip(Holder(value: true), codec).value == true)
        #expect(try roundTrip(Holder(value: Optional<Int>.none), codec).value == nil)
        #expect(try roundTrip(Holder(value: Optional(5)), codec).value == 5)
        let doubleSome: Int?? = .some(.some(9))
        #expect(try roundTrip(Holder(value: doubleSome), codec).value == doubleSome)
        let doubleNone: Int?? = .none
        #expect(try roundTrip(Holder(value: doubleNone), codec).value == doubleNone)
        let array: [Int?] = [1, nil, 3, nil]
        #expect(try roundTrip(array, codec) == array)
        let nested: [String?]? = ["a", nil]
        #expect(try roundTrip(Holder(value: nested), codec).value == nested)
    }

    @Test("Collections and dictionaries", arguments: allCodecs.indices)
    func collections(codec: Int) throws {
        let codec = allCodecs[codec]
        let stringKeys = ["a": 1, "b": 2, "": 3, "🙂": 4]
        #expect(try roundTrip(stringKeys, codec) == stringKeys)
        let intKeys = [1: "one", -7: "minus seven", Int.max: "max"]
        #expect(try roundTrip(intKeys, codec) == intKeys)
        struct Point: Codable, Hashable { var x: Int; var y: Int }
        let structKeys = [Point(x: 1, y: 2): "a", Point(x: -1, y: 0): "b"]
        #expect(try roundTrip(structKeys, codec) == structKeys)
        let nestedArrays = [[1, 2], [], [3]]
        #expect(try roundTrip(nestedArrays, codec) == nestedArrays)
        let big = Array(0..<1000)
        #expect(try roundTrip(big, codec) == big)
        #expect(try roundTrip([String](), codec) == [])
    }

    @Test("Foundation values: Data, Date, URL, Decimal", arguments: allCodecs.indices)
    func foundation(codec: Int) throws {
        let codec = allCodecs[codec]
        let data = Data([0, 1, 2, 255, 128])
        #expect(try roundTrip(Holder(value: data), codec).value == data)
        #expect(try roundTrip(Holder(value: Data()), codec).value == Data())
        let bytes: [UInt8] = [9, 8, 7]
        #expect(try roundTrip(Holder(value: bytes), codec).value == bytes)
        let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
        #expect(try roundTrip(Holder(value: date), codec).value == date)
        let url = try #require(URL(string: "https://example.com/a?b=c#d"))
        #expect(try roundTrip(Holder(value: url), codec).value == url)
        let decimal = try #require(Decimal(string: "-12345678901234567890.125"))
        #expect(try roundTrip(Holder(value: decimal), codec).value == decimal)
    }

    @Test("Enums with associated values and nested structs", arguments: allCodecs.indices)
    func enums(codec: Int) throws {
        let codec = allCodecs[codec]
        let values: [Attachment] = [
            .none, .file(name: "a", size: .max), .inline(Data([1, 2])),
            .link(URL(fileURLWithPath: "/tmp/x"), title: nil),
            .nested([.none, .nested([.file(name: "deep", size: 0)])]),
        ]
        for value in values { #expect(try roundTrip(value, codec) == value) }
        #expect(try roundTrip(sampleMessage, codec) == sampleMessage)
    }

    @Test("Class hierarchies using superEncoder/superDecoder", arguments: allCodecs.indices)
    func superCoders(codec: Int) throws {
        let value = Derived(base: 1, extra: "two")
        let decoded = try allCodecs[codec].decode(Derived.self, from: try allCodecs[codec].encode(value))
        #expect(decoded.base == 1 && decoded.extra == "two")
    }

    @Test("Keys asked for after every entry was read: absent ones are absent (also one another container has), one read before is read again", arguments: allCodecs.indices)
    func askedAfterward(codec: Int) throws {
        let codec = allCodecs[codec]
        let decoded = try codec.decode(AskedAfterward.self, from: try codec.encode(AskedAfterward(a: 7, b: "b", inner: Holder(value: 9))))
        #expect(decoded.a == 7 && decoded.b == "b" && decoded.inner.value == 9)
        #expect(decoded.absent)
        #expect(decoded.absentElsewhere)
        #expect(decoded.aAgain == 7)
    }

    @Test("Keys read out of order, unknown keys ignored, allKeys", arguments: allCodecs.indices)
    func outOfOrder(codec: Int) throws {
        let codec = allCodecs[codec]
        let decoded = try codec.decode(Reversed.self, from: try codec.encode(sampleMessage))
        #expect(decoded.subject == sampleMessage.subject)
        #expect(decoded.id == sampleMessage.id)
        #expect(decoded.from == sampleMessage.from)
        #expect(decoded.keyCount == 15)
    }
}

struct Holder<T: Codable & Equatable>: Codable, Equatable { var value: T }

/// Written as `{a, b, inner: {e}}`; read in order, then asked for keys it lacks (one no
/// container of the message has, one only `inner` has) and for one read before.
struct AskedAfterward: Codable {
    var a: Int
    var b: String
    var inner: Holder<Int>
    var absent = true
    var absentElsewhere = true
    var aAgain = 0
    enum Keys: String, CodingKey { case a, b, inner, missing, value }
    init(a: Int, b: String, inner: Holder<Int>) {
        self.a = a
        self.b = b
        self.inner = inner
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        a = try container.decode(Int.self, forKey: .a)
        b = try container.decode(String.self, forKey: .b)
        inner = try container.decode(Holder<Int>.self, forKey: .inner)
        absent = try container.decodeIfPresent(Int.self, forKey: .missing) == nil && !container.contains(.missing)
        absentElsewhere = try container.decodeIfPresent(Int.self, forKey: .value) == nil
        aAgain = try container.decode(Int.self, forKey: .a)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(a, forKey: .a)
        try container.encode(b, forKey: .b)
        try container.encode(inner, forKey: .inner)
    }
}

/// Reads a few `Message` keys backwards and counts all keys.
struct Reversed: Decodable {
    var subject: String
    var id: Int64
    var from: Address
    var keyCount: Int
    enum Keys: String, CodingKey { case subject, id, from }
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        subject = try container.decode(String.self, forKey: .subject)
        from = try container.decode(Address.self, forKey: .from)
        id = try container.decode(Int64.self, forKey: .id)
        keyCount = try decoder.container(keyedBy: AnyKey.self).allKeys.count
    }
}

class Base: Codable {
    var base: Int
    init(base: Int) { self.base = base }
}

final class Derived: Base {
    var extra: String
    init(base: Int, extra: String) {
        self.extra = extra
        super.init(base: base)
    }
    enum Keys: String, CodingKey { case extra }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }
}
