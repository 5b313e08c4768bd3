/// The name of one client's session: 128 random bits, written as 32 lowercase hex digits.
///
/// Unguessable, so holding the id is what lets a client reach its tree (with the gateway's
/// bearer token, when one is configured): ids are never derived from anything a client sends,
/// and a malformed id is simply an unknown one.
package struct SessionID: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The 32 hex digits.
    package let text: String

    /// A fresh id from the system's cryptographically secure generator.
    package static func random() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return SessionID(uncheckedText: hex(high) + hex(low))
    }

    /// The id `text` spells, or `nil` if it is not 32 lowercase hex digits.
    package init?(_ text: some StringProtocol) {
        // Checked as a `String`'s bytes in place: through the generic `UTF8View` (this module's
        // callers pass a route's parameter) it cost ~400 instructions a byte, for every request.
        var text = String(text)
        guard text.withUTF8({ $0.count == 32 && $0.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }) else { return nil }
        self.text = text
    }

    private init(uncheckedText: String) {
        text = uncheckedText
    }

    package var description: String { text }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = SessionID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a session id: \(text)"))
        }
        self = id
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
