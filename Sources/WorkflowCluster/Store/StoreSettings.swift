/// Where the coordinator keeps its durable state (`store` in the configuration file).
///
/// `none` (the default for a file without a `store` section) keeps nothing: an accepted event
/// is lost if the coordinator dies before a snapshot file is written. `sqlite` keeps every
/// accepted event in one SQLite file (`path`) before answering it; `postgres` in a PostgreSQL
/// database (`url`), which coordinators on several machines can share.
package struct StoreSettings: Sendable, Equatable {
    /// Which store.
    package enum Kind: String, CaseIterable, Sendable {
        /// No store: nothing accepted is durable.
        case none
        /// The embedded SQLite file at `path`.
        case sqlite
        /// The PostgreSQL database at `url`.
        case postgres
    }

    /// When the SQLite store's commit reaches the disk (`store.sync`; SQLite only: PostgreSQL's
    /// is the server's `synchronous_commit`).
    package enum Sync: String, CaseIterable, Sendable {
        /// Every commit fsyncs the write-ahead log before it is answered: an answered event
        /// survives a crash of the coordinator and of the machine (power loss, kernel panic).
        /// The default.
        case full
        /// Every commit is written to the write-ahead log (handed to the operating system)
        /// before it is answered, and fsynced only when SQLite checkpoints the log: an answered
        /// event survives a crash of the coordinator, SIGKILL included (the kernel holds the
        /// write), but the last commits before a crash of the machine may be lost (the file
        /// stays consistent: it comes back as of an earlier commit). Saves an fsync per commit.
        case normal
    }

    /// Which store.
    package var kind: Kind = .none
    /// The SQLite file (resolved against the configuration file's directory when relative).
    package var path: String?
    /// The PostgreSQL database (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or
    /// `postgres://USER@/DATABASE?host=SOCKET_DIR&port=PORT`; parameters `connect_timeout`,
    /// `operation_timeout`, `sslmode=disable|require|verify-ca|verify-full`, `sslrootcert=FILE`:
    /// `PostgresTransportSecurity`). Secret: the configuration dump hides it.
    package var url: String?
    /// How long a coordinator's lease on the shared store lasts (`store.lease_ms`; PostgreSQL
    /// only): set, coordinators sharing the store start as standbys and one leads at a time
    /// (`CoordinatorLeadership`); `nil`, the coordinator takes the store at start, as the only one.
    package var lease: Duration?
    /// When an SQLite commit reaches the disk: `.full` (default) or `.normal`.
    package var sync: Sync = .full
    /// The most trees' checkpoints one store transaction commits together
    /// (`store.max_commit_batch`, default 256; `1`: each tree's checkpoint commits alone): bounds
    /// one statement's size (every snapshot is in it) and how long the first in line waits.
    package var maxCommitBatch: Int = StoreSettings.defaultMaxCommitBatch

    /// The lease to configure when in doubt: a leader killed, frozen or cut off is replaced
    /// at most this long after its last renewal, which leaves time within 3 s for the standby
    /// to resume and the workers to move to it, and leaves a leader whose machine is saturated
    /// 1.6 s from a renewal asked to its deadline (three more tries; the renewals run on a
    /// thread of their own, `LeaseKeeper`).
    package static let recommendedLease: Duration = .milliseconds(2_000)
    /// The default of `maxCommitBatch`: large enough that 1,000 sessions' events per second
    /// share a few transactions, small enough to keep one statement a few megabytes.
    package static let defaultMaxCommitBatch = 256
    /// The shortest lease allowed: below it a busy machine's scheduling delays alone would make
    /// a healthy leader step down.
    package static let shortestLeaseMilliseconds = 300

    /// Creates settings.
    package init(kind: Kind = .none, path: String? = nil, url: String? = nil, lease: Duration? = nil, sync: Sync = .full,
        maxCommitBatch: Int = StoreSettings.defaultMaxCommitBatch
    ) {
        self.kind = kind
        self.path = path
        self.url = url
        self.lease = lease
        self.sync = sync
        self.maxCommitBatch = maxCommitBatch
    }
}
