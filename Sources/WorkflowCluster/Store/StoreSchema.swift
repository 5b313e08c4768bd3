/// The version of the coordinator store's tables, which the store carries (PostgreSQL: the
/// `coordinator_schema` row; SQLite: the file's `user_version`).
///
/// A coordinator upgraded before the others (or one rolled back) must not write tables it does
/// not know: a store a later release has migrated is refused at start, with the versions in
/// words, instead of being written in a layout that release no longer reads. Opening a store
/// of this version or an earlier one migrates it (in one transaction) and records this version.
package enum StoreSchema {
    /// The version this build's coordinators read and write: the tables as of the session leases
    /// held by a lease term of each coordinator (`coordinator_session_term`). Raised, with a
    /// migration step, by a release that changes the tables. A store written before versions
    /// were recorded is read as version 1 (its tables are migrated to it on opening).
    package static let version = 1

    /// Why a store of schema `found` (newer than `version`) is refused, in words.
    static func newerStore(found: Int) -> String {
        "the store's schema is version \(found), newer than this coordinator's (version \(version)): a coordinator of a later release has migrated it; run that release (a store is never migrated back)"
    }
}
