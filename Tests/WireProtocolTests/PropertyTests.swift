import Foundation
import Testing
@testable import WireProtocol

@Suite("Property: random values round-trip")
struct PropertyTests {
    static let seed: UInt64 = 0x5EED_2024_0001

    @Test("500 random inboxes round-trip through each codec", arguments: [CodecID.binary, .json])
    func randomInboxes(codec id: CodecID) throws {
        let codec = WireCodecs.codec(for: id)
        var generator = SeededGenerator(seed: Self.seed)
        for iteration in 0..<500 {
            let value = generator.inbox()
            let decoded = try roundTrip(value, codec)
            #expect(decoded == value, "codec \(id), seed \(Self.seed), iteration \(iteration)")
            if decoded != value { return }
        }
    }

    @Test("Binary output is deterministic for equal values")
    func deterministic() throws {
        var generator = SeededGenerator(seed: Self.seed ^ 1)
        let codec = BinaryWireCodec()
        for _ in 0..<50 {
            let value = generator.address()
            #expect(try codec.encode(value) == codec.encode(value))
        }
    }

    @Test("Random integers of every width round-trip", arguments: [CodecID.binary, .json])
    func integers(codec id: CodecID) throws {
        let codec = WireCodecs.codec(for: id)
        var generator = SeededGenerator(seed: Self.seed ^ 2)
        for iteration in 0..<500 {
            let value = Integers(
                i8: .random(in: .min ... .max, using: &generator), i16: .random(in: .min ... .max, using: &generator),
                i32: .random(in: .min ... .max, using: &generator), i64: .random(in: .min ... .max, using: &generator),
                u8: .random(in: .min ... .max, using: &generator), u16: .random(in: .min ... .max, using: &generator),
                u32: .random(in: .min ... .max, using: &generator), u64: .random(in: .min ... .max, using: &generator),
                int: .random(in: .min ... .max, using: &generator), uint: .random(in: .min ... .max, using: &generator))
            #expect(try roundTrip(value, codec) == value, "seed \(Self.seed ^ 2), iteration \(iteration)")
        }
    }
}

struct Integers: Codable, Equatable {
    var i8: Int8, i16: Int16, i32: Int32, i64: Int64
    var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
    var int: Int, uint: UInt
}
