import Foundation
import PostgresNIO

/// The per-session leases on the PostgreSQL store (`coordinator_session_lease`, one row per
/// session): each taken, renewed and given up by one atomic statement compared with the
/// database's `now()`; each session's commits are fenced by its row's token in the statement that
/// writes the checkpoint (`commit(_:fencedBy:)`, with `fencesSessionsByLease`).
extension PostgresCoordinatorStore: SessionLeaseStore {
    public func acquireSessionLease(_ id: SessionID, holder: String, gateway: String, for duration: Duration, creating: Bool)
        async throws(CoordinatorStoreError) -> SessionLeaseAttempt
    {
        let operation = "taking the lease of \(CheckpointScope.session(id))"
        let seconds = Self.intervalSeconds(duration)
        // A lease that runs out between the two statements below is asked for again.
        for _ in 0..<3 {
            // Taken when the row is new, its lease is not live, or this holder has it (token
            // kept); a session not being created must have a checkpoint (else it ended, or never was).
            let taken = try await values(
                operation, Int64.self,
                """
                INSERT INTO coordinator_session_lease (scope, holder, gateway_url, fencing_token, lease_expires_at)
                SELECT \(id.text), \(holder), \(gateway), 1, now() + make_interval(secs => \(seconds))
                WHERE \(creating) OR EXISTS (SELECT 1 FROM coordinator_tree_checkpoint WHERE scope = \(id.text))
                ON CONFLICT (scope) DO UPDATE SET
                    fencing_token = CASE WHEN coordinator_session_lease.holder = EXCLUDED.holder AND coordinator_session_lease.lease_expires_at > now()
                        THEN coordinator_session_lease.fencing_token ELSE coordinator_session_lease.fencing_token + 1 END,
                    holder = EXCLUDED.holder, gateway_url = EXCLUDED.gateway_url, lease_expires_at = EXCLUDED.lease_expires_at
                WHERE coordinator_session_lease.lease_expires_at <= now() OR coordinator_session_lease.holder = EXCLUDED.holder
                RETURNING fencing_token
                """)
            if let token = taken.first { return .acquired(FencingToken(rawValue: token)) }
            let rows = try await bounded(operation) { [connection, logger] in
                var rows: [(String, String, Bool)] = []
                let query: PostgresQuery = """
                    SELECT holder, gateway_url, lease_expires_at > now() FROM coordinator_session_lease WHERE scope = \(id.text)
                    """
                for try await row in try await connection.query(query, logger: logger).decode((String, String, Bool).self) { rows.append(row) }
                return rows
            }
            // No row and none taken: no checkpoint, no session. A row whose lease is no longer
            // live ran out since the first statement (asked again), or has no checkpoint.
            guard let (owner, url, live) = rows.first else { return .noSuchSession }
            if live { return .heldBy(holder: owner, gateway: url) }
        }
        return .noSuchSession
    }

    public func renewSessionLeases(holder: String, for duration: Duration) async throws(CoordinatorStoreError) -> [SessionID: FencingToken] {
        // Only live leases: one given up (a passivation, a stop, an operator) or run out is no
        // longer this holder's, even while no one else has taken it yet; reviving it would keep
        // every other coordinator redirecting to one that no longer serves the session.
        let seconds = Self.intervalSeconds(duration)
        let rows = try await bounded("renewing the session leases") { [connection, logger] in
            var rows: [(String, Int64)] = []
            let query: PostgresQuery = """
                UPDATE coordinator_session_lease SET lease_expires_at = now() + make_interval(secs => \(seconds))
                WHERE holder = \(holder) AND lease_expires_at > now()
                RETURNING scope, fencing_token
                """
            for try await row in try await connection.query(query, logger: logger).decode((String, Int64).self) { rows.append(row) }
            return rows
        }
        var held: [SessionID: FencingToken] = [:]
        for (key, token) in rows {
            guard let id = SessionID(key) else { continue }
            held[id] = FencingToken(rawValue: token)
        }
        return held
    }

    public func releaseSessionLease(_ id: SessionID, token: FencingToken) async throws(CoordinatorStoreError) {
        _ = try await values(
            "giving up the lease of \(CheckpointScope.session(id))", Int64.self,
            """
            UPDATE coordinator_session_lease SET lease_expires_at = now()
            WHERE scope = \(id.text) AND fencing_token = \(token.rawValue)
            RETURNING fencing_token
            """)
    }

    /// Removes a session's checkpoint, then its lease, if `token` is its lease's.
    func removeSession(_ id: SessionID, fencedBy token: FencingToken) async throws(CoordinatorStoreError) {
        let current = try await sessionToken(id)
        guard current == token else { throw .fenced(store: name, offered: token, current: current) }
        _ = try await values(
            "removing the checkpoint of \(CheckpointScope.session(id))", Int64.self,
            """
            WITH lease AS (SELECT fencing_token FROM coordinator_session_lease WHERE scope = \(id.text) FOR UPDATE)
            DELETE FROM coordinator_tree_checkpoint
            WHERE scope = \(id.text) AND EXISTS (SELECT 1 FROM lease WHERE lease.fencing_token = \(token.rawValue))
            RETURNING number
            """)
        // The lease goes too: a later commit with any token finds none and is refused.
        _ = try await values(
            "removing the lease of \(CheckpointScope.session(id))", Int64.self,
            """
            DELETE FROM coordinator_session_lease WHERE scope = \(id.text) AND fencing_token = \(token.rawValue)
            RETURNING fencing_token
            """)
    }

    /// The token of session `id`'s lease (0: none).
    func sessionToken(_ id: SessionID) async throws(CoordinatorStoreError) -> FencingToken {
        let tokens = try await values(
            "reading the lease of \(CheckpointScope.session(id))", Int64.self,
            "SELECT fencing_token FROM coordinator_session_lease WHERE scope = \(id.text)")
        return FencingToken(rawValue: tokens.first ?? 0)
    }

    /// `duration` in seconds, as `make_interval` takes them.
    private static func intervalSeconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
