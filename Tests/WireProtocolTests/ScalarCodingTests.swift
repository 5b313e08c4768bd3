import Testing
@testable import WireProtocol

/// A message of one scalar (an event's or an output's value) is written without an encoder and
/// read without `init(from:)`: its bytes must be exactly those the encoder writes for the same
/// value inside a container, and integers of every width must read back, or fail, as before.
@Suite("Scalar messages")
struct ScalarCodingTests {
    let codec = BinaryWireCodec()

    /// The bytes of `value` as the last element of a one-element array: the encoder's own.
    func encodedInside<T: Encodable>(_ value: T) throws -> ArraySlice<UInt8> {
        // An unkeyed tag and a count of 1, then the value.
        try codec.encode([value]).dropFirst(2)
    }

    func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        let bytes = try codec.encode(value)
        #expect(bytes[...] == (try encodedInside(value)), "\(T.self) \(value)")
        #expect(try codec.decode(T.self, from: bytes) == value)
        let scratch = WireCodingScratch()
        #expect(try codec.encode(value, reusing: scratch) == bytes)
    }

    @Test("Each scalar type's message is the encoder's bytes for it, and decodes to it")
    func sameBytes() throws {
        for value in [0, 1, -1, 63, -64, 64, 127, 128, 300, -300, 1 << 40, Int.max, Int.min] { try roundTrip(value) }
        for value in [0, 127, 128, UInt64(1) << 62, UInt64(1) << 63, UInt64.max] { try roundTrip(value) }
        for value in [Int64.min, -1, 0, Int64.max] { try roundTrip(value) }
        for value in ["", "a", String(repeating: "é", count: 200)] { try roundTrip(value) }
        for value in [0.0, -1.5, Double.greatestFiniteMagnitude] { try roundTrip(value) }
        for value in [true, false] { try roundTrip(value) }
    }

    @Test("An integer too large for the type asked is out of range, whatever its varint's length")
    func outOfRange() throws {
        let huge = try codec.encode(UInt64.max)
        #expect(throws: WireError.self) { try codec.decode(Int.self, from: huge) }
        let beyond64 = try codec.encode(UInt128(1) << 100)
        #expect(throws: WireError.self) { try codec.decode(UInt64.self, from: beyond64) }
        #expect(try codec.decode(UInt128.self, from: beyond64) == UInt128(1) << 100)
        let negative = try codec.encode(-5)
        #expect(throws: WireError.self) { try codec.decode(UInt64.self, from: negative) }
        for bytes in [huge, beyond64] {
            do {
                _ = try codec.decode(Int64.self, from: bytes)
                Issue.record("\(bytes) decoded as Int64")
            } catch {
                guard case .valueOutOfRange = error else {
                    Issue.record("expected valueOutOfRange, got \(error)")
                    continue
                }
            }
        }
    }

    @Test("A varint cut short is truncated input")
    func truncated() throws {
        let bytes = try codec.encode(Int.max)
        for length in 2..<bytes.count {
            do {
                _ = try codec.decode(Int.self, from: Array(bytes.prefix(length)))
                Issue.record("\(length) of \(bytes.count) bytes decoded")
            } catch {
                guard case .truncated = error else {
                    Issue.record("expected truncated, got \(error)")
                    continue
                }
            }
        }
    }
}
