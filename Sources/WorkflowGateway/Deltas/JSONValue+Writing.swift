import Foundation
import Workflow

extension JSONValue {
    /// The value as compact JSON with sorted keys (as the session's encoder writes renderings),
    /// slashes unescaped; written byte by byte, not through `JSONEncoder`, for the reason
    /// `init?(json:)` is read that way.
    package var bytes: Data {
        var out: [UInt8] = []
        write(to: &out)
        return Data(out)
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): out.append(contentsOf: String(value).utf8)
        case .number(let value):
            guard value.isFinite else {
                out.append(contentsOf: "null".utf8)
                return
            }
            // Integral doubles without the ".0" Swift's description adds, as `JSONEncoder` writes them.
            let text = value.description
            out.append(contentsOf: (text.hasSuffix(".0") ? text.dropLast(2) : Substring(text)).utf8)
        case .string(let value): Self.write(string: value, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                Self.write(string: member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `value` quoted, slashes unescaped (`JSONText`).
    private static func write(string value: String, to out: inout [UInt8]) {
        JSONText.appendQuoted(value, escapingSlashes: false, to: &out)
    }
}
