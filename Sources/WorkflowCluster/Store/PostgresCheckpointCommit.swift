import Foundation
import PostgresNIO

/// The statement that commits a batch of checkpoints to the PostgreSQL store
/// (`PostgresCoordinatorStore.commit(_:)`): one statement, so one transaction, with every value a
/// bound parameter.
///
/// Its text depends only on the columns the layout written has beyond version 1's (none in this
/// release: a schema step may add some), so version 1's layout commits through a prepared
/// statement (`Prepared`): the server parses and analyses it once per connection, where an
/// unnamed statement was parsed and analysed again for every transaction (about a fifth of the
/// database's time under events, measured with `perf`). It is still planned for each batch's
/// values (the store's connections set `plan_cache_mode` to `force_custom_plan`): a generic plan
/// is made once, and one made while the lease table was small scans it whole once it has grown
/// (seen: three quarters of the database's time in such a scan).
///
/// Each row is fenced by its own token: the writer row's, or (spread) its session's lease's,
/// looked up by its key for each row (no scan of the lease table). Both are read `FOR SHARE`, so
/// a new writer or a session's new owner waits for a commit in progress, and a stale token
/// filters out its own row only. The layout written is checked against the `coordinator_schema`
/// row, read `FOR SHARE` too (a migration's update of it waits for this commit, and a commit
/// after it sees the new version and writes nothing). Arrays have no NULL elements: a flag says
/// which root and props are there. It returns the scope of every row written.
struct PostgresCheckpointCommit: Sendable {
    /// The statement's values, in the order of its parameters.
    let bindings: PostgresBindings
    /// The names of the columns beyond version 1's (none: the prepared statement).
    let extraColumns: [String]

    /// The statement for `checkpoints`, fenced by session leases when `leased` (spread
    /// sessions), writing layout `writing`, whose columns beyond version 1's are `extra` (filled
    /// from each checkpoint).
    init(_ checkpoints: [FencedCheckpoint], leased: Bool, writing: Int, extra: [CheckpointColumn]) {
        let rows = checkpoints.map(\.checkpoint)
        var bindings = PostgresBindings(capacity: 12 + extra.count)
        bindings.append(rows.map(\.scope.key))
        bindings.append(rows.map { $0.origin?.root ?? "" })
        bindings.append(rows.map { $0.origin != nil })
        bindings.append(rows.map { ByteBuffer(bytes: $0.origin?.props ?? Data()) })
        bindings.append(rows.map { $0.origin?.props != nil })
        bindings.append(rows.map(\.number))
        bindings.append(checkpoints.map(\.token.rawValue))
        bindings.append(rows.map { Int64(clamping: $0.renderingSequence) })
        bindings.append(rows.map(\.acceptedEvents))
        bindings.append(rows.map { ByteBuffer(bytes: $0.snapshot) })
        bindings.append(leased)
        bindings.append(Int64(writing))
        for column in extra { bindings.append(rows.map(column.value)) }
        self.bindings = bindings
        self.extraColumns = extra.map(\.name)
    }

    /// The statement's text for a layout with the columns `extra` beyond version 1's (their
    /// values are the parameters after the twelfth, `int8[]` each).
    static func sql(extra: [String]) -> String {
        let names = extra.map { ", " + $0 }.joined()
        let arrays = extra.indices.map { ", $\(13 + $0)::int8[]" }.joined()
        let selected = extra.map { ", b." + $0 }.joined()
        let updates = extra.map { ", \($0) = EXCLUDED.\($0)" }.joined()
        let shared = CheckpointScope.sharedKey
        return """
            WITH batch AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::bool[], $4::bytea[], $5::bool[], $6::int8[], $7::int8[], $8::int8[],
                    $9::int8[], $10::bytea[]\(arrays))
                AS b(scope, root, has_root, props, has_props, number, token, rendering_sequence, accepted_events, snapshot\(names))),
            writer AS (SELECT fencing_token FROM coordinator_writer WHERE id = 1 FOR SHARE),
            layout AS (SELECT version FROM coordinator_schema WHERE id = 1 FOR SHARE)
            INSERT INTO coordinator_tree_checkpoint
                (scope, root, props, number, fencing_token, rendering_sequence, accepted_events, snapshot\(names))
            SELECT b.scope, CASE WHEN b.has_root THEN b.root END, CASE WHEN b.has_props THEN b.props END, b.number, b.token,
                b.rendering_sequence, b.accepted_events, b.snapshot\(selected)
            FROM batch b
            WHERE (SELECT version FROM layout) = $12::int8 AND b.token = CASE
                WHEN $11::bool AND b.scope <> '\(shared)' THEN (
                    SELECT lease.fencing_token FROM coordinator_session_lease lease WHERE lease.scope = b.scope FOR SHARE)
                ELSE (SELECT fencing_token FROM writer) END
            ON CONFLICT (scope) DO UPDATE SET number = EXCLUDED.number, fencing_token = EXCLUDED.fencing_token,
                rendering_sequence = EXCLUDED.rendering_sequence, accepted_events = EXCLUDED.accepted_events,
                snapshot = EXCLUDED.snapshot, committed_at = now()\(updates)
            RETURNING scope
            """
    }

    /// The scopes of the rows written, running the statement on `connection`: prepared when the
    /// layout has no extra columns, else as an unnamed statement of its own text.
    func run(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var scopes: [String] = []
        if extraColumns.isEmpty {
            for try await scope in try await connection.execute(Prepared(bindings: bindings), logger: logger) { scopes.append(scope) }
        } else {
            let query = PostgresQuery(unsafeSQL: Self.sql(extra: extraColumns), binds: bindings)
            for try await scope in try await connection.query(query, logger: logger).decode(String.self) { scopes.append(scope) }
        }
        return scopes
    }

    /// Version 1's layout's commit, prepared once per connection.
    struct Prepared: PostgresPreparedStatement {
        typealias Row = String
        static let name = "workflow_commit_checkpoints"
        static let sql = PostgresCheckpointCommit.sql(extra: [])
        let bindings: PostgresBindings

        func makeBindings() -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
    }
}
