/// A 32-byte CURVE (Curve25519) key, public or secret.
///
/// A dedicated type rather than `[UInt8]` so that socket options can only be given keys
/// of the right length, and so keys are never accidentally logged: `description` does not
/// reveal the key material (use ``z85`` deliberately when the text form is needed).
public struct CurveKey: Sendable, Hashable, CustomStringConvertible {
    /// Why a key could not be constructed.
    public enum Error: Swift.Error, Sendable, Hashable {
        /// CURVE keys are exactly 32 bytes; this many were given.
        case invalidByteCount(Int)
        /// The Z85 text form was malformed.
        case invalidZ85(Z85.Error)
    }

    /// The 32 raw key bytes.
    public let bytes: [UInt8]

    /// Wraps raw key bytes, rejecting anything that is not exactly 32 bytes long.
    public init(bytes: some Collection<UInt8>) throws(Error) {
        let bytes = Array(bytes)
        guard bytes.count == 32 else { throw .invalidByteCount(bytes.count) }
        self.bytes = bytes
    }

    /// Parses the 40-character Z85 text form used in configuration and on command lines.
    public init(z85 text: String) throws(Error) {
        let decoded: [UInt8]
        do {
            decoded = try Z85.decode(text)
        } catch {
            throw .invalidZ85(error)
        }
        try self.init(bytes: decoded)
    }

    /// Internal initialiser for bytes libzmq produced (always 32 bytes).
    init(trusted bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The 40-character Z85 text form (safe to print only for public keys).
    public var z85: String {
        // 32 is a multiple of 4, so encoding cannot fail.
        (try? Z85.encode(bytes)) ?? ""
    }

    /// Deliberately opaque, so secret keys do not leak into logs.
    public var description: String { "CurveKey(32 bytes)" }
}
