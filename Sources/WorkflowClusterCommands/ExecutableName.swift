import Foundation

/// The name this process was started as (`workflow-coordinator`, `orders-coordinator`), so help
/// and error lines name the user's executable rather than the library's.
enum ExecutableName {
    /// The last path component of the executable's path, or `fallback`.
    static func current(or fallback: String) -> String {
        guard let path = CommandLine.arguments.first, !path.isEmpty else { return fallback }
        return URL(fileURLWithPath: path).lastPathComponent
    }
}
