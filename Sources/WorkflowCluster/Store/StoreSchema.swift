/// The layout of the coordinator store's tables as one release reads and writes them: version 1
/// (the tables every store is prepared to) and the steps after it, each raising the version by
/// one. The store carries its version (PostgreSQL: the `coordinator_schema` row; SQLite: the
/// file's `user_version`).
///
/// A value, not constants, so that coordinators of two releases can share a store while they are
/// upgraded one at a time: a release writes the layout of its own version *and* of the version
/// before (`oldestWritable`), so it keeps writing the older layout on a store that a coordinator
/// of the previous release still uses, and runs its last step only once every live coordinator
/// of the store can write the result (`PostgresCoordinatorStore`'s announcements). A store a
/// later release has migrated is refused, in words, instead of being written in a layout that
/// release no longer reads; a store is never migrated back.
package struct StoreSchema: Sendable {
    /// The steps after version 1, in order: the first makes version 2, the next 3, and so on.
    package let steps: [StoreSchemaStep]

    /// A schema of version 1 followed by `steps` (their versions 2, 3, … in order).
    package init(steps: [StoreSchemaStep] = []) {
        for (index, step) in steps.enumerated() {
            precondition(step.version == index + 2, "store schema step \(index) makes version \(step.version), expected \(index + 2)")
        }
        self.steps = steps
    }

    /// This release's schema: version 1, the tables as of the session leases held by a lease
    /// term of each coordinator (`coordinator_session_term`). A release that changes the tables
    /// appends a step here. A store written before versions were recorded is read as version 0
    /// and migrated to 1 when it is opened.
    package static let thisRelease = StoreSchema()

    /// The newest version this release writes (its stores end at it).
    package var version: Int { steps.last?.version ?? 1 }

    /// The oldest version this release still writes: the one before its last step, so that a
    /// store of the previous release is kept as it is while a coordinator of that release is live.
    package var oldestWritable: Int { max(1, version - 1) }

    /// The step that makes `version` (`nil` for version 1 and below, and beyond this release).
    package func step(to version: Int) -> StoreSchemaStep? {
        steps.first { $0.version == version }
    }

    /// The checkpoint columns a writer of `version` fills in with every commit, beyond version 1's:
    /// those every step up to `version` added.
    package func checkpointColumns(writing version: Int) -> [CheckpointColumn] {
        steps.filter { $0.version <= version }.flatMap(\.checkpointColumns)
    }

    /// Why a store of schema `found` (newer than `version`) is refused at start, in words.
    func newerStore(found: Int) -> String {
        "the store's schema is version \(found), newer than this coordinator's (version \(version)): a coordinator of a later release has migrated it; run that release (a store is never migrated back)"
    }
}
