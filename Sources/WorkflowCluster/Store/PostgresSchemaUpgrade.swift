import Logging
import PostgresNIO

/// How a coordinator opening a PostgreSQL store moves its schema forward (`StoreSchema`), inside
/// the transaction that prepares the tables, under the schema's advisory lock: so of any number
/// of coordinators opening at once, one runs each step, once.
///
/// Coordinators of two releases share the store while they are upgraded one at a time. Each
/// *announces* itself for as long as it runs: a row of `coordinator_release` (its name, the
/// oldest and newest version it writes) and a shared session-level advisory lock on that row's
/// number, held by its store connection. PostgreSQL frees the lock when that connection's backend
/// ends (the process stopped, crashed or was killed), so a row whose lock nobody holds is a
/// coordinator that is gone: no renewal, no expiry, no periodic work. A step runs only when
/// every live coordinator's newest version reaches it; until then the opener writes the layout
/// the store has (its release writes the one before its last step too). So the last coordinator
/// of the previous release to be replaced is the one whose successor's start runs the step. A
/// frozen or cut-off coordinator keeps its backend, and so delays the step: the safe side.
///
/// A step takes `coordinator_tree_checkpoint` in ACCESS EXCLUSIVE mode first: commits in progress
/// end before it, later ones wait for its transaction, then find the new version in the
/// `coordinator_schema` row they read FOR SHARE and are written again in the new layout
/// (`PostgresCoordinatorStore.commit(_:)`) — or refused in words, by a release that does not
/// write it.
struct PostgresSchemaUpgrade {
    /// The store's connection, inside the preparing transaction.
    let connection: PostgresConnection
    /// The layouts the opener writes.
    let schema: StoreSchema
    /// The opener's name, announced.
    let holder: String
    /// The store's name, in errors.
    let storeName: String
    let logger: Logger

    /// A live coordinator of the store, as it announced itself.
    struct Announcement {
        var number: Int64
        var holder: String
        var newest: Int
    }

    /// How long an opener waits for a coordinator that blocks a step to end: one that has just
    /// stopped (its successor is this opener, started at once) may still have its database
    /// session for an instant, and that one is all the step waits for.
    static let endingSessionWait: Duration = .seconds(2)

    /// Announces the opener, runs every step from `found` (the version the store records, `0`
    /// for none) that every live coordinator can write, records the version reached and returns
    /// it: the version the opener writes. Refuses (`cannotOpen`) a store older than the opener
    /// writes while a coordinator that cannot write the opener's oldest version is live.
    func advance(from found: Int) async throws -> Int {
        var others = try await announce()
        if others.contains(where: { $0.newest < schema.version }), found < schema.version {
            others = try await withoutEnded(others)
        }
        var current = max(found, 1)
        while current < schema.version {
            let target = current + 1
            let behind = others.filter { $0.newest < target }
            if let first = behind.first {
                let names = behind.map { "\($0.holder) (newest version \($0.newest))" }.joined(separator: ", ")
                guard target > schema.oldestWritable else {
                    throw CoordinatorStoreError.cannotOpen(
                        store: storeName,
                        reason: "the store's schema is version \(current), which this coordinator no longer writes (it writes versions \(schema.oldestWritable) to \(schema.version)), and a coordinator of the store that writes version \(first.newest) at most is running: \(names); upgrade it to the release before this one first")
                }
                logger.notice(
                    "store schema kept at version \(current), which this coordinator writes too: version \(target) once every coordinator of the store can write it",
                    metadata: ["store": "\(storeName)", "waiting-for": "\(names)"])
                break
            }
            guard let step = schema.step(to: target) else { break }
            try await migrate(step)
            current = target
        }
        if current != found {
            try await run(
                """
                INSERT INTO coordinator_schema (id, version) VALUES (1, \(current))
                ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, since = now()
                """)
        }
        return current
    }

    /// Announces the opener (a row and the lock on it, which its connection holds until it
    /// ends), forgets the rows of coordinators that are gone and returns the other live ones:
    /// two round trips, since coordinators opening at once wait for each other's.
    private func announce() async throws -> [Announcement] {
        try await run(
            """
            DO $announce$ BEGIN
                CREATE SEQUENCE IF NOT EXISTS coordinator_release_number;
                CREATE TABLE IF NOT EXISTS coordinator_release (
                    number BIGINT PRIMARY KEY, holder TEXT NOT NULL, oldest_version INT NOT NULL, newest_version INT NOT NULL,
                    since TIMESTAMPTZ NOT NULL DEFAULT now());
            END $announce$
            """)
        // One statement (its data-modifying parts run whatever the query reads): the lock is
        // session-level and shared (kept after this transaction, by this connection only, never
        // in another announcement's way); the others are read from the statement's snapshot,
        // which holds the rows it forgets and not this one, so they are filtered by their locks.
        var others: [Announcement] = []
        let rows = try await connection.query(
            """
            WITH me AS (SELECT nextval('coordinator_release_number') AS number),
            locked AS (SELECT me.number, pg_advisory_lock_shared(\(unescaped: Self.lockKey("me.number"))) FROM me),
            forgotten AS (DELETE FROM coordinator_release r WHERE NOT \(unescaped: Self.isLive)),
            added AS (
                INSERT INTO coordinator_release (number, holder, oldest_version, newest_version)
                SELECT number, \(holder), \(schema.oldestWritable), \(schema.version) FROM locked)
            SELECT r.number, r.holder, r.newest_version FROM coordinator_release r
            WHERE \(unescaped: Self.isLive)
            ORDER BY r.number
            """, logger: logger)
        for try await (number, holder, newest) in rows.decode((Int64, String, Int32).self) {
            others.append(Announcement(number: number, holder: holder, newest: Int(newest)))
        }
        return others
    }

    /// `others` without those older than this release whose sessions end within
    /// `endingSessionWait` (all waited for at once, by one deadline): an exclusive lock on an
    /// announcement's key is granted once its coordinator's shared one is freed. A savepoint
    /// keeps a wait that times out from failing the transaction.
    private func withoutEnded(_ others: [Announcement]) async throws -> [Announcement] {
        let deadline = ContinuousClock.now + Self.endingSessionWait
        var live: [Announcement] = []
        for other in others {
            let left = deadline - .now
            guard (other.newest < schema.version), left > .zero else {
                live.append(other)
                continue
            }
            let milliseconds = max(1, Int64(left / .milliseconds(1)))
            try await run("SAVEPOINT waiting_for_an_ending_coordinator")
            do {
                try await run(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = \(milliseconds)"))
                try await run("SELECT pg_advisory_xact_lock(\(unescaped: Self.lockKey("\(other.number)")))")
                try await run("RELEASE SAVEPOINT waiting_for_an_ending_coordinator")
                try await run("DELETE FROM coordinator_release WHERE number = \(other.number)")
            } catch {
                // Still live (the wait ran out), or the wait failed: counted live either way.
                try await run("ROLLBACK TO SAVEPOINT waiting_for_an_ending_coordinator")
                live.append(other)
            }
        }
        try await run("SET LOCAL lock_timeout = 0")
        return live
    }

    /// Runs `step`'s statements, commits waiting for it (above).
    private func migrate(_ step: StoreSchemaStep) async throws {
        try await run("LOCK TABLE coordinator_tree_checkpoint IN ACCESS EXCLUSIVE MODE")
        for statement in step.postgres { try await run(PostgresQuery(unsafeSQL: statement)) }
        logger.notice("store schema migrated to version \(step.version): \(step.summary)", metadata: ["store": "\(storeName)"])
    }

    private func run(_ query: PostgresQuery) async throws {
        for try await _ in try await connection.query(query, logger: logger) {}
    }

    /// The advisory lock key of announcement `number` (SQL): the announcements table's oid in the
    /// high half (clusters in different schemas of one database do not meet), the number's low
    /// 32 bits in the low half.
    static func lockKey(_ number: String) -> String {
        "(('coordinator_release'::regclass::oid::bigint << 32) | (\(number) % 4294967296))"
    }

    /// Whether the coordinator of announcement row `r` is live (SQL): some backend holds its lock.
    static let isLive = """
        EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid = 'coordinator_release'::regclass::oid AND l.objid::bigint = r.number % 4294967296)
        """
}
