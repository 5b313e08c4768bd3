import Foundation

/// A JSON value as the rendering stream's diff sees it: renderings arrive as bytes (the
/// session's encoder wrote them), and a delta is computed between two of them, so both sides are
/// read into this one shape (`init?(json:)`), compared structurally and written back with sorted
/// keys (`bytes`).
package indirect enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    /// An integer, kept exact (an `id` key compares as the integer it is).
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Whether the value can key an element of a keyed array: an integer or a string.
    var isKey: Bool {
        switch self {
        case .integer, .string: true
        default: false
        }
    }

    /// Words for an error: the value's kind.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
