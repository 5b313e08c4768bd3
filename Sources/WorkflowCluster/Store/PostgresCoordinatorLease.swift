import Foundation
import PostgresNIO

/// The lease on the PostgreSQL store: the writer row's `lease_expires_at`, compared with the
/// database's `now()` in the statement that changes the row, so taking, extending and giving up
/// the lease are each one atomic statement and the coordinators' clocks never matter. Its round
/// trips take the lease's own connection (`leaseConnection`).
extension PostgresCoordinatorStore: EventLoopLeasedCoordinatorStore {
    public func acquireLease(holder: String, for duration: Duration) async throws(CoordinatorStoreError) -> LeaseAttempt {
        let asked = ContinuousClock.now
        let operation = "taking the lease"
        // Taken when there is no row, or its lease is not live (expired, given up, or never
        // taken: a writer without a lease); the token rises with every new leader.
        let taken = try await leaseRows(
            operation,
            """
            INSERT INTO coordinator_writer (id, fencing_token, holder, lease_expires_at)
            VALUES (1, 1, \(holder), now() + make_interval(secs => \(Self.seconds(duration))))
            ON CONFLICT (id) DO UPDATE SET fencing_token = coordinator_writer.fencing_token + 1, holder = EXCLUDED.holder,
                since = now(), lease_expires_at = EXCLUDED.lease_expires_at
            WHERE coordinator_writer.lease_expires_at IS NULL OR coordinator_writer.lease_expires_at <= now()
            RETURNING fencing_token, holder, lease_expires_at
            """)
        if let row = taken.first {
            return .acquired(CoordinatorLease(holder: row.holder, token: row.token, expiresAt: row.expiresAt, validUntil: asked + duration))
        }
        let live = try await leaseRows(operation, "SELECT fencing_token, holder, lease_expires_at FROM coordinator_writer WHERE id = 1")
        guard let row = live.first else {
            throw .failed(store: name, operation: operation, reason: "the lease row is neither taken nor there")
        }
        return .heldBy(CoordinatorLease(holder: row.holder, token: row.token, expiresAt: row.expiresAt, validUntil: asked))
    }

    public func renewLease(_ lease: CoordinatorLease, for duration: Duration) async throws(CoordinatorStoreError) -> CoordinatorLease {
        let renewed = try await bounded("renewing the lease", on: leaseConnection) { [self] in
            try await renewal(of: lease, for: duration).get()
        }
        guard let renewed else { throw try await fenced(lease.token) }
        return renewed
    }

    package var leaseEventLoop: any EventLoop { leaseConnection.eventLoop }

    package var leaseConnectionClosed: EventLoopFuture<Void> { leaseConnection.closeFuture }

    package func renewal(of lease: CoordinatorLease, for duration: Duration) -> EventLoopFuture<CoordinatorLease?> {
        let asked = ContinuousClock.now
        let connection = leaseConnection
        guard !connection.isClosed else {
            return connection.eventLoop.makeFailedFuture(
                CoordinatorStoreError.failed(store: name, operation: "renewing the lease", reason: "the lease's connection to the database is closed"))
        }
        // Only while the token is still the latest: no one else has led since, so extending
        // (even a lease that ran out unnoticed) overlaps no other leader.
        let query: PostgresQuery = """
            UPDATE coordinator_writer SET lease_expires_at = now() + make_interval(secs => \(Self.seconds(duration)))
            WHERE id = 1 AND fencing_token = \(lease.token.rawValue)
            RETURNING fencing_token, holder, lease_expires_at
            """
        let name = name
        return connection.query(query, logger: logger).flatMapThrowing { result in
            try result.first.map(Self.leaseRow).map {
                CoordinatorLease(holder: $0.holder, token: $0.token, expiresAt: $0.expiresAt, validUntil: asked + duration)
            }
        }.flatMapErrorThrowing { error in
            throw CoordinatorStoreError.failed(store: name, operation: "renewing the lease", reason: Self.words(error))
        }
    }

    public func stepDown(_ lease: CoordinatorLease) async throws(CoordinatorStoreError) {
        _ = try await leaseRows(
            "giving up the lease",
            """
            UPDATE coordinator_writer SET fencing_token = fencing_token + 1, lease_expires_at = now()
            WHERE id = 1 AND fencing_token = \(lease.token.rawValue)
            RETURNING fencing_token, holder, lease_expires_at
            """)
    }

    /// The writer rows `query` returns (token, holder, expiry; a writer without a lease shows
    /// as expired at the epoch).
    private func leaseRows(_ operation: String, _ query: PostgresQuery) async throws(CoordinatorStoreError)
        -> [(token: FencingToken, holder: String, expiresAt: Date)]
    {
        try await bounded(operation, on: leaseConnection) { [leaseConnection, logger] in
            var rows: [(token: FencingToken, holder: String, expiresAt: Date)] = []
            for try await row in try await leaseConnection.query(query, logger: logger) { rows.append(try Self.leaseRow(row)) }
            return rows
        }
    }

    /// A writer row (token, holder, expiry; a writer without a lease shows as expired at the
    /// epoch).
    private static func leaseRow(_ row: PostgresRow) throws -> (token: FencingToken, holder: String, expiresAt: Date) {
        let (token, holder, expiry) = try row.decode((Int64, String, Date?).self)
        return (FencingToken(rawValue: token), holder, expiry ?? Date(timeIntervalSince1970: 0))
    }

    /// `duration` in seconds, as `make_interval` takes them.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
