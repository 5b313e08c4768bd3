import Foundation
import PostgresNIO

/// The lease on the PostgreSQL store: the writer row's `lease_expires_at`, compared with the
/// database's `now()` in the statement that changes the row, so taking, extending and giving up
/// the lease are each one atomic statement and the coordinators' clocks never matter. Its round
/// trips take the lease's own connection (`leaseConnection`).
///
/// A fast path for a leader whose process died: the leader holds a session-level advisory lock
/// (`leaderLock`) on its lease connection and the writer row names that connection's backend
/// (`lease_backend_pid`, set only while the lock is held). PostgreSQL frees the lock as soon as
/// that backend ends (its client's socket closed: a SIGKILL, a crash, a terminated backend),
/// so a standby that gets the lock while the row names another backend knows the leader's lease
/// connection is gone and takes the lease at once, by the same token-raising statement, without
/// waiting for the expiry. A frozen or cut-off leader keeps its backend and the lock: then the
/// expiry is the path, and the standby that took over that way ends the replaced leader's
/// backend so that it (or a later leader) holds the lock for the next failover. Safety still
/// rests on the fencing token alone; the lock only tells a standby sooner.
extension PostgresCoordinatorStore: EventLoopLeasedCoordinatorStore {
    package func acquireLease(holder: String, for duration: Duration) async throws(CoordinatorStoreError) -> LeaseAttempt {
        let asked = ContinuousClock.now
        let operation = "taking the lease"
        // Holding the lock proves no other session does: a leader that recorded its backend in
        // the row while holding it has lost that backend.
        var locked = false
        if usesLeaderLock {
            locked = try await leaseRows(operation, "SELECT pg_try_advisory_lock(\(unescaped: Self.leaderLock))") { try $0.decode(Bool.self) }.first ?? false
        }
        let lockedSQL = locked ? "true" : "false"
        // Taken when there is no row, or its lease is not live (expired, given up, or never
        // taken: a writer without a lease), or its leader's lease connection is gone (above);
        // the token rises with every new leader. `previous` is read from the statement's
        // snapshot: the backend of the leader being replaced, to end when it still holds the lock.
        let taken = try await leaseRows(
            operation,
            """
            WITH previous AS (SELECT lease_backend_pid FROM coordinator_writer WHERE id = 1)
            INSERT INTO coordinator_writer (id, fencing_token, holder, lease_expires_at, lease_backend_pid)
            VALUES (1, 1, \(holder), now() + make_interval(secs => \(Self.seconds(duration))),
                CASE WHEN \(unescaped: lockedSQL) THEN pg_backend_pid() END)
            ON CONFLICT (id) DO UPDATE SET fencing_token = coordinator_writer.fencing_token + 1, holder = EXCLUDED.holder,
                since = now(), lease_expires_at = EXCLUDED.lease_expires_at, lease_backend_pid = EXCLUDED.lease_backend_pid
            WHERE coordinator_writer.lease_expires_at IS NULL OR coordinator_writer.lease_expires_at <= now()
                OR (\(unescaped: lockedSQL) AND coordinator_writer.lease_backend_pid <> pg_backend_pid())
            RETURNING fencing_token, holder, lease_expires_at, (SELECT lease_backend_pid FROM previous)
            """
        ) { row in
            let (token, holder, expiry, previous) = try row.decode((Int64, String, Date?, Int32?).self)
            return (lease: Self.lease(token, holder, expiry), previous: previous)
        }
        if let row = taken.first {
            if !locked, let previous = row.previous { await endStaleLockHolder(previous) }
            return .acquired(CoordinatorLease(holder: row.lease.holder, token: row.lease.token, expiresAt: row.lease.expiresAt, validUntil: asked + duration))
        }
        // Not leading: a standby does not sit on the lock, which the leader may still need.
        if locked { _ = try await leaseRows(operation, "SELECT pg_advisory_unlock(\(unescaped: Self.leaderLock))") { _ in () } }
        let live = try await leaseRows(operation, "SELECT fencing_token, holder, lease_expires_at FROM coordinator_writer WHERE id = 1", Self.leaseRow)
        guard let row = live.first else {
            throw .failed(store: name, operation: operation, reason: "the lease row is neither taken nor there")
        }
        return .heldBy(CoordinatorLease(holder: row.holder, token: row.token, expiresAt: row.expiresAt, validUntil: asked))
    }

    /// Whether this store's leader holds the leader's lock: only on a lease connection of its
    /// own (`open(…, leaseConnection: true)`, as a coordinator sharing the store opens it), so
    /// the replaced leader's backend that a successor ends is never the one its commits use.
    var usesLeaderLock: Bool { leaseConnection !== connection }

    /// The leader's advisory lock, as SQL: one 64-bit key per writer table (its high half spells
    /// "wfcl", its low half is the table's oid), so clusters in different schemas of one
    /// database do not share it.
    static let leaderLock = "(2003198828::bigint << 32) | 'coordinator_writer'::regclass::oid::bigint"

    /// Ends the backend `pid` if it still holds the leader's lock: the lease connection of a
    /// leader this one replaced by expiry (frozen, cut off), which would otherwise keep the lock
    /// until TCP notices, leaving the next failover to the slow path. Ending it also makes that
    /// leader step down the moment it looks (`leaseConnectionLost`). Best effort: a role not
    /// allowed to signal the other backend leaves the lock to be taken when it is freed.
    private func endStaleLockHolder(_ pid: Int32) async {
        do throws(CoordinatorStoreError) {
            _ = try await leaseRows(
                "ending the replaced leader's lease connection",
                """
                SELECT pg_terminate_backend(pid) FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND pid = \(pid) AND pid <> pg_backend_pid()
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND classid = 2003198828 AND objid = 'coordinator_writer'::regclass::oid AND objsubid = 1
                """
            ) { _ in () }
        } catch {
            logger.warning("the replaced leader's lease connection still holds the leader's lock (the next takeover waits for the expiry): \(error)")
        }
    }

    package func renewLease(_ lease: CoordinatorLease, for duration: Duration) async throws(CoordinatorStoreError) -> CoordinatorLease {
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
        // (even a lease that ran out unnoticed) overlaps no other leader. A leader not yet
        // holding the leader's lock (it took over by expiry from one that still held it) tries
        // for it here, until it has it; `CASE` asks for it only then.
        let backend =
            usesLeaderLock
            ? """
            CASE WHEN lease_backend_pid = pg_backend_pid() THEN lease_backend_pid
                WHEN pg_try_advisory_lock(\(Self.leaderLock)) THEN pg_backend_pid() END
            """ : "lease_backend_pid"
        let query: PostgresQuery = """
            UPDATE coordinator_writer SET lease_expires_at = now() + make_interval(secs => \(Self.seconds(duration))),
                lease_backend_pid = \(unescaped: backend)
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

    package func stepDown(_ lease: CoordinatorLease) async throws(CoordinatorStoreError) {
        _ = try await leaseRows(
            "giving up the lease",
            """
            UPDATE coordinator_writer SET fencing_token = fencing_token + 1, lease_expires_at = now()
            WHERE id = 1 AND fencing_token = \(lease.token.rawValue)
            RETURNING fencing_token, holder, lease_expires_at
            """, Self.leaseRow)
    }

    /// The rows `query` returns on the lease connection, each read by `read`.
    private func leaseRows<Row: Sendable>(
        _ operation: String, _ query: PostgresQuery, _ read: @escaping @Sendable (PostgresRow) throws -> Row
    ) async throws(CoordinatorStoreError) -> [Row] {
        try await bounded(operation, on: leaseConnection) { [leaseConnection, logger] in
            var rows: [Row] = []
            for try await row in try await leaseConnection.query(query, logger: logger) { rows.append(try read(row)) }
            return rows
        }
    }

    /// A writer row (token, holder, expiry; a writer without a lease shows as expired at the
    /// epoch).
    private static func leaseRow(_ row: PostgresRow) throws -> (token: FencingToken, holder: String, expiresAt: Date) {
        let (token, holder, expiry) = try row.decode((Int64, String, Date?).self)
        return lease(token, holder, expiry)
    }

    /// A writer row's lease columns, typed (a writer without a lease shows as expired at the epoch).
    private static func lease(_ token: Int64, _ holder: String, _ expiry: Date?) -> (token: FencingToken, holder: String, expiresAt: Date) {
        (FencingToken(rawValue: token), holder, expiry ?? Date(timeIntervalSince1970: 0))
    }

    /// `duration` in seconds, as `make_interval` takes them.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
