/// The one-byte type tag that starts every value in a binary payload.
///
/// Tagging each value costs a byte but buys two things the wire needs: a decoder asked for the
/// wrong type reports `.typeMismatch` instead of misreading bytes, and any value can be skipped
/// without knowing its Swift type (keyed lookups out of order, unknown keys, `allKeys`).
enum BinaryTag: UInt8 {
    /// `nil` (`encodeNil`, an absent optional inside an unkeyed container). No body.
    case null = 0x00
    /// `false`. No body.
    case `false` = 0x01
    /// `true`. No body.
    case `true` = 0x02
    /// Any unsigned integer (UInt8…UInt128): LEB128 varint.
    case unsigned = 0x03
    /// Any signed integer (Int8…Int128): zigzag, then LEB128 varint.
    case signed = 0x04
    /// `Float`: 4 bytes, IEEE 754 bit pattern, big-endian.
    case float32 = 0x05
    /// `Double`: 8 bytes, IEEE 754 bit pattern, big-endian.
    case float64 = 0x06
    /// `String`: varint byte count, then UTF-8.
    case string = 0x07
    /// `Data` / `[UInt8]`: varint byte count, then the raw bytes.
    case bytes = 0x08
    /// Keyed container: varint entry count, then (key reference, value) pairs.
    case keyed = 0x09
    /// Unkeyed container: varint element count, then the values.
    case unkeyed = 0x0A

    /// How errors name a tag byte that was found where something else was expected.
    static func name(_ byte: UInt8) -> String {
        guard let tag = BinaryTag(rawValue: byte) else { return "unknown tag 0x\(String(byte, radix: 16))" }
        switch tag {
        case .null: return "nil"
        case .false, .true: return "Bool"
        case .unsigned: return "unsigned integer"
        case .signed: return "signed integer"
        case .float32: return "Float"
        case .float64: return "Double"
        case .string: return "String"
        case .bytes: return "bytes"
        case .keyed: return "keyed container"
        case .unkeyed: return "unkeyed container"
        }
    }
}

/// The coding key of an element in an unkeyed container, for coding paths.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The key `superEncoder()`/`superDecoder()` use, as in Foundation's coders.
struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(intValue: Int) { nil }
    init?(stringValue: String) { nil }
}
