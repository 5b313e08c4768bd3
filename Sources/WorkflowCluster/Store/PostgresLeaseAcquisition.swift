import PostgresNIO

/// The statement that takes a session's lease on the PostgreSQL store
/// (`PostgresCoordinatorStore.acquireSessionLease`), prepared once per connection: every session
/// created or taken over runs it, and prepared it is parsed and analysed once, not each time.
///
/// Taken when the row is new, was given up, its term is not live, or this term has it (token
/// kept); only under a live term; a session not being created must have a checkpoint (else it
/// ended, or never was). Its row: the lease's token if taken (`NULL` if not), and whether the term
/// is live.
///
/// Committed without waiting for the WAL's flush (`synchronous_commit` off for this transaction
/// only). Nothing a client is told rests on the lease alone: a creation is answered after the
/// session's first checkpoint is committed, an event after its own, and a rendering is shown once
/// committed; each of those commits waits for the flush, which covers the lease's record, written
/// before it. A lease a crash of the database took back leaves a token its holder's commits no
/// longer match: they are refused, as after a takeover. One fsync less per session created or
/// taken over.
struct PostgresLeaseAcquisition: PostgresPreparedStatement {
    typealias Row = (Int64?, Bool)
    static let name = "workflow_take_session_lease"
    static let sql = """
        WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
        mine AS (SELECT term FROM coordinator_session_term, relaxed WHERE term = $1::int8 AND expires_at > now()),
        taken AS (
            INSERT INTO coordinator_session_lease AS lease (scope, term, fencing_token, released)
            SELECT $2::text, term, 1, false FROM mine
            WHERE $3::bool OR EXISTS (SELECT 1 FROM coordinator_tree_checkpoint WHERE scope = $2::text)
            ON CONFLICT (scope) DO UPDATE SET
                fencing_token = CASE WHEN lease.term = EXCLUDED.term AND NOT lease.released
                    THEN lease.fencing_token ELSE lease.fencing_token + 1 END,
                term = EXCLUDED.term, released = false
            WHERE lease.term = EXCLUDED.term OR lease.released OR NOT EXISTS (
                SELECT 1 FROM coordinator_session_term live WHERE live.term = lease.term AND live.expires_at > now())
            RETURNING fencing_token)
        SELECT (SELECT fencing_token FROM taken), EXISTS (SELECT 1 FROM mine)
        """

    /// The term asking.
    let term: Int64
    /// The session's key (`CheckpointScope.session`'s).
    let scope: String
    /// Whether the session is being created (no checkpoint yet).
    let creating: Bool

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(term)
        bindings.append(scope)
        bindings.append(creating)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (Int64?, Bool) { try row.decode((Int64?, Bool).self) }
}
