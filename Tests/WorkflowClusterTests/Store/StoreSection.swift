import Foundation
import WorkflowCluster

/// Opens the store a test's `store` section names (`StoreBackend.withEmptyStore`), as the
/// coordinator would.
enum StoreSection {
    /// The settings `section` spells (`kind` and `path` or `url`).
    static func settings(_ section: [String: String]) -> StoreSettings {
        StoreSettings(kind: StoreSettings.Kind(rawValue: section["kind"] ?? "") ?? .none, path: section["path"], url: section["url"])
    }

    /// A new connection to the store `section` names.
    static func open(_ section: [String: String]) async throws -> any CoordinatorStore {
        switch settings(section).kind {
        case .sqlite: try await SQLiteCoordinatorStore.open(path: section["path"] ?? "")
        case .postgres: try await PostgresCoordinatorStore.open(url: section["url"] ?? "")
        case .none: throw CoordinatorStoreError.cannotOpen(store: "none", reason: "the test named no store")
        }
    }
}
