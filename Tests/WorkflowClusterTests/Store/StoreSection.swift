import Foundation
import Logging
import PostgresNIO
@testable import WorkflowCluster

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

    /// Runs `statements` on the store `section` names, through a connection of its own (not the
    /// store's): what an earlier version of the store, or an operator, left in it.
    static func execute(_ section: [String: String], _ statements: [String]) async throws {
        for statement in statements { _ = try await rows(section, statement) }
    }

    /// The first column of each row `query` returns from the store `section` names, as
    /// integers, read through a connection of its own (what is in the tables, not what the store
    /// reads of them).
    static func integers(_ section: [String: String], _ query: String) async throws -> [Int64] {
        try await rows(section, query)
    }

    /// Runs `sql` through a connection of its own to the store `section` names, closed after,
    /// and returns the first column of each row it returns that reads as an integer.
    private static func rows(_ section: [String: String], _ sql: String) async throws -> [Int64] {
        let logger = Logger(label: "test.raw-store")
        switch settings(section).kind {
        case .sqlite:
            let connection = try await SQLiteStoreConnection.open(path: section["path"] ?? "", logger: logger)
            do {
                let rows = try await connection.query(sql)
                await connection.close()
                return rows.compactMap { $0.values.first?.integer.map(Int64.init) }
            } catch {
                await connection.close()
                throw error
            }
        case .postgres:
            guard let url = URLComponents(string: section["url"] ?? "") else {
                throw CoordinatorStoreError.cannotOpen(store: section["url"] ?? "", reason: "not a URL")
            }
            let parameters = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            let socket = "\(parameters["host"] ?? "")/.s.PGSQL.\(parameters["port"] ?? "5432")"
            let connection = try await PostgresConnection.connect(
                configuration: .init(unixSocketPath: socket, username: url.user ?? "postgres", password: nil, database: String(url.path.dropFirst())),
                id: 3, logger: logger)
            do {
                var values: [Int64] = []
                for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                    if let value = try? row.decode(Int64.self) { values.append(value) }
                }
                try await connection.close()
                return values
            } catch {
                try? await connection.close()
                throw error
            }
        case .none:
            throw CoordinatorStoreError.cannotOpen(store: "none", reason: "the test named no store")
        }
    }
}

extension StoreSection {
    /// Returns once the coordinator that announced itself as `holder` on the PostgreSQL store
    /// `section` names is gone (its database session ended, freeing its announcement's lock;
    /// `PostgresSchemaUpgrade`): a closed store's backend ends a moment after the close, later
    /// on a loaded machine. Waits on the lock itself, not on a clock.
    static func waitUntilGone(_ section: [String: String], holder: String) async throws {
        let key = "(('coordinator_release'::regclass::oid::bigint << 32) | (r.number % 4294967296))"
        try await execute(section, [
            "SELECT pg_advisory_lock(\(key)) FROM coordinator_release r WHERE r.holder = '\(holder)'",
            "SELECT pg_advisory_unlock_all()",
        ])
    }
}
