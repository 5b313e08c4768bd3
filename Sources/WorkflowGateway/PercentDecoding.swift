/// Decodes a path segment's percent escapes (RFC 3986 §2.1): what an event's `{token}` is
/// before the gateway looks it up.
///
/// Browsers escape a sink token's `:` and `@` (`encodeURIComponent`), so nearly every event
/// comes escaped. Foundation's `removingPercentEncoding` goes through `NSString` for each one:
/// 1–2 % of a coordinator's time under events (perf). This walks the UTF-8 once.
enum PercentDecoding {
    /// `segment` with every `%XX` replaced by its byte; `nil` when an escape is not two hex
    /// digits or the bytes are not UTF-8 (as `removingPercentEncoding` answers). A segment
    /// without `%` is returned as it is.
    static func decoded(_ segment: String) -> String? {
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return segment }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(segment.utf8.count)
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
