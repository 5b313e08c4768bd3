/// A column of `coordinator_tree_checkpoint` added by a schema step (`StoreSchemaStep`): a
/// number every commit of a writer of that step's version computes from the checkpoint it writes.
///
/// Computed in Swift and bound like the other columns, so both stores write it the same way and
/// a step needs no SQL of its own in the commit path.
package struct CheckpointColumn: Sendable {
    /// The column's name (lower-case letters, digits and `_`: it is spliced into statements).
    package let name: String
    /// Its value for a checkpoint being committed.
    package let value: @Sendable (CoordinatorCheckpoint) -> Int64

    /// A column `name` holding `value` of each checkpoint committed.
    package init(name: String, value: @escaping @Sendable (CoordinatorCheckpoint) -> Int64) {
        precondition(
            !name.isEmpty && name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" },
            "a checkpoint column's name is lower-case letters, digits and _ (got \(name))")
        self.name = name
        self.value = value
    }
}
