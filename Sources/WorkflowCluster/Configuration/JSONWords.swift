import Foundation

/// How a JSON value is named in errors ("a string ("fast")", "null").
enum JSONWords {
    /// `value` in words.
    static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is String: "a string (\"\(value)\")"
        case let number as NSNumber: "a number or boolean (\(number))"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: "\(type(of: value))"
        }
    }
}
