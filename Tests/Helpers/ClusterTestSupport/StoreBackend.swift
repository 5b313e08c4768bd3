import Foundation
import Testing
import WorkflowClusterTesting

/// A kind of coordinator store the tests run against, each as the real thing: an SQLite file in
/// a temporary directory, or a private PostgreSQL server (`PrivatePostgres`).
package enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    package var testDescription: String { rawValue }

    /// Runs `body` with an empty store of this kind, as the configuration file's `store` section
    /// names it (`kind` and `path` or `url`), removed when `body` ends (also when it throws). With
    /// no PostgreSQL server to be had here, the `postgres` case is skipped, saying why.
    package func withEmptyStore<T>(_ label: String, _ body: ([String: String]) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            return try await StoreDirectory.with(label) { directory in
                try await body(["kind": "sqlite", "path": directory.appendingPathComponent("coordinator.sqlite").path])
            }
        case .postgres:
            if let reason = PrivatePostgres.unavailableReason { try Test.cancel("PostgreSQL store test skipped: \(reason)") }
            return try await PrivatePostgres.with { server in try await body(["kind": "postgres", "url": server.url]) }
        }
    }
}
