import Foundation

/// A temporary directory for one test's SQLite files, removed when `body` ends (also on failure).
package enum StoreDirectory {
    package static func with<T>(_ label: String, _ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("workflow-store-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}
