import Foundation
import PostgresNIO

/// The session leases on the PostgreSQL store: one row per coordinator term
/// (`coordinator_session_term`, numbered by a sequence so a number is never reused) and one row
/// per session (`coordinator_session_lease`: the term holding it, its fencing token, whether it
/// was given up). Each is taken, renewed and given up by one atomic statement compared with the
/// database's `now()`; each session's commits are fenced by its row's token in the statement
/// that writes the checkpoint (`commit(_:fencedBy:)`, with `fencesSessionsByLease`).
extension PostgresCoordinatorStore: EventLoopSessionLeaseStore {
    package func beginSessionLeaseTerm(holder: String, gateway: String, for duration: Duration) async throws(CoordinatorStoreError) -> SessionLeaseTerm {
        let seconds = Self.intervalSeconds(duration)
        // The holder's earlier terms end now (their sessions are free at once); terms that ended
        // long ago are forgotten (a session still naming one is free, as under any ended term).
        let numbers = try await values(
            "beginning a session lease term of \(holder)", Int64.self,
            """
            WITH ended AS (
                UPDATE coordinator_session_term SET expires_at = now() WHERE holder = \(holder) AND expires_at > now() RETURNING term),
            forgotten AS (
                DELETE FROM coordinator_session_term WHERE expires_at < now() - interval '1 hour' RETURNING term)
            INSERT INTO coordinator_session_term (term, holder, gateway_url, expires_at)
            VALUES (nextval('coordinator_session_term_number'), \(holder), \(gateway), now() + make_interval(secs => \(seconds)))
            RETURNING term
            """)
        guard let number = numbers.first else {
            throw .failed(store: name, operation: "beginning a session lease term of \(holder)", reason: "the database returned no term")
        }
        return SessionLeaseTerm(number: number, holder: holder)
    }

    package func renewSessionLeaseTerm(_ term: SessionLeaseTerm, for duration: Duration) async throws(CoordinatorStoreError) -> Bool {
        try await bounded("renewing the session lease \(term)", on: leaseConnection) { [self] in
            try await sessionTermRenewal(of: term, for: duration).get()
        }
    }

    package func endSessionLeaseTerm(_ term: SessionLeaseTerm) async throws(CoordinatorStoreError) {
        _ = try await values(
            "ending the session lease \(term)", Int64.self,
            "UPDATE coordinator_session_term SET expires_at = now() WHERE term = \(term.number) AND expires_at > now() RETURNING term")
    }

    package func acquireSessionLease(_ id: SessionID, term: SessionLeaseTerm, creating: Bool) async throws(CoordinatorStoreError) -> SessionLeaseAttempt {
        let operation = "taking the lease of \(CheckpointScope.session(id))"
        // A lease whose term ends between the two statements below is asked for again.
        for _ in 0..<3 {
            // `PostgresLeaseAcquisition` says when it is taken, and why without a WAL flush.
            let rows = try await bounded(operation) { [connection, logger] in
                var rows: [(Int64?, Bool)] = []
                let statement = PostgresLeaseAcquisition(term: term.number, scope: id.text, creating: creating)
                for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                return rows
            }
            guard let (token, live) = rows.first, live else { return .termEnded }
            if let token { return .acquired(FencingToken(rawValue: token)) }
            let holders = try await bounded(operation) { [connection, logger] in
                var rows: [(String?, String?, Bool)] = []
                let query: PostgresQuery = """
                    SELECT owner.holder, owner.gateway_url, coalesce(owner.expires_at > now() AND NOT lease.released, false)
                    FROM coordinator_session_lease lease LEFT JOIN coordinator_session_term owner ON owner.term = lease.term
                    WHERE lease.scope = \(id.text)
                    """
                for try await row in try await connection.query(query, logger: logger).decode((String?, String?, Bool).self) { rows.append(row) }
                return rows
            }
            // No row and none taken: no checkpoint, no session. A row whose lease is no longer
            // live ran out since the first statement (asked again), or has no checkpoint.
            guard let (owner, url, live) = holders.first else { return .noSuchSession }
            if live, let owner, let url { return .heldBy(holder: owner, gateway: url) }
        }
        return .noSuchSession
    }

    package func releaseSessionLease(_ id: SessionID, token: FencingToken) async throws(CoordinatorStoreError) {
        _ = try await values(
            "giving up the lease of \(CheckpointScope.session(id))", Int64.self,
            """
            UPDATE coordinator_session_lease SET released = true
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

    package func sessionTermRenewal(of term: SessionLeaseTerm, for duration: Duration) -> EventLoopFuture<Bool> {
        let connection = leaseConnection
        let operation = "renewing the session lease \(term)"
        guard !connection.isClosed else {
            return connection.eventLoop.makeFailedFuture(
                CoordinatorStoreError.failed(store: name, operation: operation, reason: "the connection to the database is closed"))
        }
        // Only a live term: one that ran out is never revived, since another coordinator may
        // already serve the sessions it held.
        let query: PostgresQuery = """
            UPDATE coordinator_session_term SET expires_at = now() + make_interval(secs => \(Self.intervalSeconds(duration)))
            WHERE term = \(term.number) AND expires_at > now()
            RETURNING term
            """
        let name = name
        return connection.query(query, logger: logger).map { $0.first != nil }.flatMapErrorThrowing { error in
            throw CoordinatorStoreError.failed(store: name, operation: operation, reason: Self.words(error))
        }
    }
}
