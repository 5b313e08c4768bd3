import Foundation

/// Words for a decoding failure (which key, what was expected), for answers to clients that sent
/// JSON a type cannot decode (an event, a session's props).
enum DecodingFailureWords {
    /// Words for `error`, not its dump.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) value\(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\"\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
