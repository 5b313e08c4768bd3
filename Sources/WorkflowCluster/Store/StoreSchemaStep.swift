/// One change of the coordinator store's tables, from the version before to `version`: what a
/// release that changes the store appends to its `StoreSchema`.
///
/// A value, so a store runs it the same way whichever release's list it is in: in one
/// transaction with the new version recorded (a crash leaves either layout whole), once (the
/// transaction checks the version it starts from, under the store's lock). Its statements change
/// the tables and fill in what is already there; its `checkpointColumns` are what every commit
/// of a writer of `version` or later fills in, which a writer of an earlier version does not
/// know — why such a writer is refused once the step has run.
package struct StoreSchemaStep: Sendable {
    /// The version the store is of once this step has run.
    package let version: Int
    /// What the step changes, in words (logged when it runs).
    package let summary: String
    /// The statements that migrate a PostgreSQL store, in order.
    package let postgres: [String]
    /// The statements that migrate an SQLite file, in order.
    package let sqlite: [String]
    /// The columns of `coordinator_tree_checkpoint` this step adds, filled in by every commit from
    /// then on.
    package let checkpointColumns: [CheckpointColumn]

    /// A step to `version`.
    package init(version: Int, summary: String, postgres: [String], sqlite: [String], checkpointColumns: [CheckpointColumn] = []) {
        self.version = version
        self.summary = summary
        self.postgres = postgres
        self.sqlite = sqlite
        self.checkpointColumns = checkpointColumns
    }
}
