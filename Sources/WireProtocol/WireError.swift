/// Everything that can go wrong turning frames into values or values into frames.
///
/// Bytes arriving from another process are untrusted, so decoding never traps: every malformed
/// input becomes one of these cases, naming what was wrong and where, so a receiver can drop the
/// message, log something useful and (where the protocol allows) answer with an `error` message.
/// Coding paths are rendered as text (`"a.b[2].c"`) so the error stays `Sendable` and `Equatable`.
package enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer bytes were present than a field needed.
    case truncated(expected: Int, available: Int, context: String)
    /// A multipart message had no header frame at all.
    case missingHeader
    /// The header did not start with the magic bytes `0x57 0x46` ("WF"): not our protocol.
    case badMagic(UInt16)
    /// The header's protocol version is not one this build speaks.
    case unsupportedVersion(UInt8)
    /// The header's kind byte names no known `MessageKind`.
    case unknownKind(UInt8)
    /// The header's codec byte names no known `CodecID`.
    case unknownCodec(UInt8)
    /// The header set flag bits that this version does not define (all must be 0 in v1).
    case unsupportedFlags(UInt8)
    /// A declared length or count exceeds a configured `WireLimits` bound (checked before
    /// anything is allocated for it).
    case lengthTooLarge(declared: UInt64, limit: Int, context: String)
    /// Text that must be UTF-8 was not.
    case invalidUTF8(context: String)
    /// A value of one type was present where another was asked for.
    case typeMismatch(expected: String, found: String, codingPath: String)
    /// A keyed container did not contain a key its decoder required.
    case keyNotFound(key: String, codingPath: String)
    /// A number did not fit the type it was decoded as (or was not representable on the wire).
    case valueOutOfRange(String, codingPath: String)
    /// Bytes remained after a complete frame or value was decoded.
    case trailingBytes(count: Int, context: String)
    /// Containers were nested deeper than `WireLimits.maxDepth`.
    case nestingTooDeep(limit: Int)
    /// The byte stream is structurally invalid (bad varint, unknown type tag, bad key reference…).
    case malformed(String, codingPath: String)
    /// The value's own `init(from:)` rejected the decoded data (`DecodingError.dataCorrupted`).
    case dataCorrupted(String, codingPath: String)
    /// The value could not be encoded: its `encode(to:)` threw, or used the encoder in a way
    /// the codec cannot represent.
    case encodingFailed(String, codingPath: String)
    /// A `Codable` implementation threw an error that is not a coding error (e.g. a sink with no
    /// transport); its description is kept so the cause is not lost.
    case valueError(String)

    package var description: String {
        switch self {
        case let .truncated(expected, available, context):
            "truncated \(context): needed \(expected) byte(s), \(available) available"
        case .missingHeader:
            "message has no header frame"
        case let .badMagic(magic):
            "bad magic 0x\(String(magic, radix: 16)) (expected 0x5746 \"WF\")"
        case let .unsupportedVersion(version):
            "unsupported protocol version \(version)"
        case let .unknownKind(kind):
            "unknown message kind \(kind)"
        case let .unknownCodec(codec):
            "unknown codec \(codec)"
        case let .unsupportedFlags(flags):
            "unsupported header flags 0b\(String(flags, radix: 2))"
        case let .lengthTooLarge(declared, limit, context):
            "\(context) declares \(declared), above the limit of \(limit)"
        case let .invalidUTF8(context):
            "invalid UTF-8 in \(context)"
        case let .typeMismatch(expected, found, path):
            "type mismatch at \(Self.render(path)): expected \(expected), found \(found)"
        case let .keyNotFound(key, path):
            "key \"\(key)\" not found at \(Self.render(path))"
        case let .valueOutOfRange(message, path):
            "value out of range at \(Self.render(path)): \(message)"
        case let .trailingBytes(count, context):
            "\(count) trailing byte(s) after \(context)"
        case let .nestingTooDeep(limit):
            "nesting deeper than the limit of \(limit)"
        case let .malformed(message, path):
            "malformed data at \(Self.render(path)): \(message)"
        case let .dataCorrupted(message, path):
            "data corrupted at \(Self.render(path)): \(message)"
        case let .encodingFailed(message, path):
            "cannot encode value at \(Self.render(path)): \(message)"
        case let .valueError(message):
            "value coding failed: \(message)"
        }
    }

    private static func render(_ path: String) -> String {
        path.isEmpty ? "<root>" : path
    }
}
