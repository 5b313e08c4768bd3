import CZeroMQ

/// The Z85 text encoding (ZeroMQ RFC 32) via `zmq_z85_encode` / `zmq_z85_decode`.
///
/// CURVE keys are exchanged as 40-character Z85 strings in configuration files and
/// command lines (e.g. when a parent process tells a child which server key to trust),
/// so malformed input must be reported precisely instead of yielding garbage keys.
public enum Z85 {
    /// Why an encode or decode was rejected.
    public enum Error: Swift.Error, Sendable, Hashable {
        /// Z85 encodes 4-byte groups; the input had this many bytes.
        case byteCountNotMultipleOfFour(Int)
        /// Z85 text comes in 5-character groups; the input had this many characters.
        case lengthNotMultipleOfFive(Int)
        /// The text contains a character outside the Z85 alphabet, at this offset
        /// (counted in UTF-8 bytes).
        case invalidCharacter(offset: Int)
        /// The text is well-formed character-wise but a group decodes to a value above
        /// 2^32 − 1, so libzmq rejected it.
        case invalidGroup
    }

    /// The 85 characters of the Z85 alphabet, in value order.
    static let alphabet: [UInt8] = Array(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8
    )

    /// Encodes bytes whose count is a multiple of 4 into Z85 text (5 characters per group).
    public static func encode(_ bytes: some Collection<UInt8>) throws(Error) -> String {
        let input = Array(bytes)
        guard input.count % 4 == 0 else { throw .byteCountNotMultipleOfFour(input.count) }
        if input.isEmpty { return "" }
        var output = [CChar](repeating: 0, count: input.count / 4 * 5 + 1)
        let encoded = input.withUnsafeBufferPointer { source in
            zmq_z85_encode(&output, source.baseAddress, source.count)
        }
        // Only a length error makes libzmq fail, and that was checked above.
        guard encoded != nil else { throw .byteCountNotMultipleOfFour(input.count) }
        return String(decoding: output.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes Z85 text (length a multiple of 5) into bytes (4 per group).
    public static func decode(_ text: String) throws(Error) -> [UInt8] {
        let characters = Array(text.utf8)
        guard characters.count % 5 == 0 else { throw .lengthNotMultipleOfFive(characters.count) }
        if let offset = characters.firstIndex(where: { !alphabet.contains($0) }) {
            throw .invalidCharacter(offset: offset)
        }
        if characters.isEmpty { return [] }
        var output = [UInt8](repeating: 0, count: characters.count / 5 * 4)
        let cString = characters.map { CChar(bitPattern: $0) } + [0]
        let decoded = zmq_z85_decode(&output, cString)
        guard decoded != nil else { throw .invalidGroup }
        return output
    }
}
