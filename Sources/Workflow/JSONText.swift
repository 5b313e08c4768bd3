import Foundation

/// JSON text written byte by byte, as Foundation's `JSONEncoder` writes it, for the few hot paths
/// that write a known shape (a tree snapshot for a checkpoint, a rendering message) and would
/// otherwise pay an encoder's containers, boxes and key sorting for every value they hold.
package enum JSONText {
    /// Appends `value` quoted: `"` and `\` escaped, control characters as `\n`-style or `\u00XX`
    /// escapes (lowercase hex), `/` as `\/` when `escapingSlashes` (`JSONEncoder`'s default),
    /// everything else as its UTF-8.
    package static func appendQuoted(_ value: String, escapingSlashes: Bool, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        // Runs that need no escape are copied whole: a checkpoint quotes its rendering's JSON,
        // and a byte at a time cost about twenty instructions each.
        value.withUTF8 { bytes in
            var run = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (byte == UInt8(ascii: "/") && escapingSlashes) else {
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                run = index + 1
                let escaped: UInt8
                switch byte {
                case 0x0A: escaped = UInt8(ascii: "n")
                case 0x0D: escaped = UInt8(ascii: "r")
                case 0x09: escaped = UInt8(ascii: "t")
                case 0x08: escaped = UInt8(ascii: "b")
                case 0x0C: escaped = UInt8(ascii: "f")
                case 0x00..<0x20:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigit(byte >> 4))
                    out.append(hexDigit(byte & 0xF))
                    continue
                default: escaped = byte // `"`, `\` and `/` escape as themselves
                }
                out.append(UInt8(ascii: "\\"))
                out.append(escaped)
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `data` as `JSONEncoder`'s default strategy does: a base64 string (its `/`
    /// escaped).
    package static func appendBase64(_ data: Data, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Through the buffer: `Data`'s iterator costs a call per byte.
        data.base64EncodedData().withUnsafeBytes { encoded in
            var start = 0
            for index in encoded.indices where encoded[index] == UInt8(ascii: "/") {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: encoded[start..<index]))
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
                start = index + 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: encoded[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `"key":` (the key needs no escaping: the callers' keys are fixed ASCII names).
    package static func appendKey(_ key: StaticString, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// Appends an integer in decimal.
    package static func appendInteger(_ value: some BinaryInteger, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    /// The lowercase hexadecimal digit of `nibble` (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
