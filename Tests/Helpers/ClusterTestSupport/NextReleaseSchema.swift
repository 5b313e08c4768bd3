import Foundation
import WorkflowCluster

/// The store schema the coordinator plays the next release with (DURABILITY_TEST_STORE_SCHEMA=next),
/// as the test worker plays the next build: this release's, plus a step to version 2 that adds a
/// column every commit fills in (the size of the checkpoint's snapshot), which this release does
/// not know. The step also records each time it runs in a table of its own, created without
/// `IF NOT EXISTS`, so a second run would fail and the runs can be counted. The store tests open
/// stores with it too.
package enum NextReleaseSchema {
    package static let schema = StoreSchema(steps: [
        StoreSchemaStep(
            version: 2, summary: "checkpoints record the size of their snapshot (snapshot_bytes)",
            postgres: [
                "ALTER TABLE coordinator_tree_checkpoint ADD COLUMN snapshot_bytes BIGINT",
                "UPDATE coordinator_tree_checkpoint SET snapshot_bytes = octet_length(snapshot)",
                "ALTER TABLE coordinator_tree_checkpoint ALTER COLUMN snapshot_bytes SET NOT NULL",
                "CREATE TABLE test_schema_step_run (version INT NOT NULL)",
                "INSERT INTO test_schema_step_run VALUES (2)",
            ],
            sqlite: [
                "ALTER TABLE coordinator_tree_checkpoint ADD COLUMN snapshot_bytes INTEGER",
                "UPDATE coordinator_tree_checkpoint SET snapshot_bytes = length(snapshot)",
                "CREATE TABLE test_schema_step_run (version INTEGER NOT NULL)",
                "INSERT INTO test_schema_step_run VALUES (2)",
            ],
            checkpointColumns: [CheckpointColumn(name: "snapshot_bytes") { Int64($0.snapshot.count) }])
    ])
}
