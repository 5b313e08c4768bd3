import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// Coordinators upgraded one at a time on a shared store (`StoreSchema`, `PostgresSchemaUpgrade`):
/// a coordinator of the next release (`NextReleaseSchema`, version 2) keeps writing version 1
/// while one of this release is live, the last step runs once every live coordinator can write
/// it, exactly once however many open the store at once, and a coordinator of this release is
/// refused afterwards, in words, with nothing written.
@Suite("Store schema upgrade")
struct StoreSchemaUpgradeTests {
    /// A store of `section`'s kind opened as a coordinator of the release whose schema is `schema`.
    static func open(_ section: [String: String], _ schema: StoreSchema, holder: String = "a test coordinator") async throws
        -> any CoordinatorStore
    {
        if section["kind"] == "sqlite" { return try await SQLiteCoordinatorStore.open(path: section["path"] ?? "", schema: schema) }
        return try await PostgresCoordinatorStore.open(url: section["url"] ?? "", schema: schema, holder: holder)
    }

    /// How many `snapshot_bytes` columns the checkpoint table has (0 before the step, 1 after).
    static func addedColumns(_ section: [String: String]) async throws -> Int64 {
        let query =
            section["kind"] == "sqlite"
            ? "SELECT count(*) FROM pragma_table_info('coordinator_tree_checkpoint') WHERE name = 'snapshot_bytes'"
            : "SELECT count(*) FROM information_schema.columns WHERE table_name = 'coordinator_tree_checkpoint' AND column_name = 'snapshot_bytes'"
        return try await StoreSection.integers(section, query).first ?? -1
    }

    /// How many times the step ran (its own table's rows; 0 when it never did).
    static func stepRuns(_ section: [String: String]) async throws -> Int64 {
        guard try await addedColumns(section) > 0 else { return 0 }
        return try await StoreSection.integers(section, "SELECT count(*) FROM test_schema_step_run").first ?? -1
    }

    /// The schema version the store records.
    static func recordedVersion(_ section: [String: String]) async throws -> Int64 {
        let query = section["kind"] == "sqlite" ? "PRAGMA user_version" : "SELECT version::bigint FROM coordinator_schema WHERE id = 1"
        return try await StoreSection.integers(section, query).first ?? -1
    }

    /// Closes every store of `stores`.
    static func close(_ stores: [any CoordinatorStore]) async {
        for store in stores { await store.close() }
    }

    @Test("PostgreSQL: a coordinator of the next release keeps writing version 1 while one of this release is live; the next one to open after it ended runs the last step, and the first switches to version 2 at its next commit")
    func keptWhileAnOlderCoordinatorIsLive() async throws {
        try await StoreBackend.postgres.withEmptyStore("schema-kept") { section in
            let old = try await Self.open(section, .thisRelease, holder: "coordinator of this release")
            let first = try await Self.open(section, NextReleaseSchema.schema, holder: "first of the next release")
            var open: [any CoordinatorStore] = [old, first]
            do {
                let upgraded = try #require(first as? PostgresCoordinatorStore)
                #expect(upgraded.writingVersion == 1)
                #expect(try await upgraded.schemaVersion() == 1)
                #expect(try await Self.addedColumns(section) == 0)
                // It writes version 1's layout meanwhile (the coordinator of this release could
                // read it back, and lead again after it).
                let token = try await first.acquireWriter(holder: "first of the next release")
                try await first.commit(CoordinatorStoreContractTests.checkpoint(1, "written as version 1"), fencedBy: token)
                #expect(try await old.latestCheckpoint()?.snapshot == Data("written as version 1".utf8))

                // The coordinator of this release stops: the next one to open runs the step, once.
                await old.close()
                open.removeFirst()
                try await StoreSection.waitUntilGone(section, holder: "coordinator of this release")
                let second = try await Self.open(section, NextReleaseSchema.schema, holder: "second of the next release")
                open.append(second)
                #expect((second as? PostgresCoordinatorStore)?.writingVersion == 2)
                #expect(try await Self.recordedVersion(section) == 2)
                #expect(try await Self.stepRuns(section) == 1)
                // Filled in for the checkpoint already there.
                #expect(
                    try await StoreSection.integers(section, "SELECT snapshot_bytes FROM coordinator_tree_checkpoint WHERE scope = 'shared'")
                        == [Int64("written as version 1".utf8.count)])

                // The first one's next commit finds version 2 and is written in it.
                try await first.commit(CoordinatorStoreContractTests.checkpoint(2, "written as version 2 by the first"), fencedBy: token)
                #expect(upgraded.writingVersion == 2)
                #expect(
                    try await StoreSection.integers(section, "SELECT snapshot_bytes FROM coordinator_tree_checkpoint WHERE scope = 'shared'")
                        == [Int64("written as version 2 by the first".utf8.count)])

                // A coordinator of this release is refused at start, in words.
                await #expect {
                    _ = try await Self.open(section, .thisRelease)
                } throws: { error in
                    guard case .cannotOpen(_, let reason) = error as? CoordinatorStoreError else { return false }
                    return reason.contains("the store's schema is version 2, newer than this coordinator's (version 1)")
                }
            } catch {
                await Self.close(open)
                throw error
            }
            await Self.close(open)
        }
    }

    @Test("PostgreSQL: a coordinator two releases ahead refuses, in words, a version 1 store a coordinator of this release is running on; once that one is gone it runs both steps at open")
    func twoReleasesAhead() async throws {
        let twoAhead = StoreSchema(
            steps: NextReleaseSchema.schema.steps + [
                StoreSchemaStep(
                    version: 3, summary: "a table of the release after next", postgres: ["CREATE TABLE test_step_three (x INT)"],
                    sqlite: ["CREATE TABLE test_step_three (x INTEGER)"])
            ])
        try await StoreBackend.postgres.withEmptyStore("schema-two-ahead") { section in
            let old = try await Self.open(section, .thisRelease, holder: "coordinator of this release")
            do {
                await #expect {
                    _ = try await Self.open(section, twoAhead)
                } throws: { error in
                    guard case .cannotOpen(_, let reason) = error as? CoordinatorStoreError else { return false }
                    return reason.contains("the store's schema is version 1, which this coordinator no longer writes (it writes versions 2 to 3)")
                        && reason.contains("coordinator of this release (newest version 1)")
                        && reason.contains("upgrade it to the release before this one first")
                }
                #expect(try await Self.recordedVersion(section) == 1)
            } catch {
                await old.close()
                throw error
            }
            await old.close()
            try await StoreSection.waitUntilGone(section, holder: "coordinator of this release")
            let ahead = try await Self.open(section, twoAhead)
            #expect((ahead as? PostgresCoordinatorStore)?.writingVersion == 3)
            await ahead.close()
            #expect(try await Self.recordedVersion(section) == 3)
            #expect(try await Self.stepRuns(section) == 1)
        }
    }

    @Test("a coordinator of this release still running when the store is migrated has its next commit refused in words, and nothing is written", arguments: StoreBackend.allCases)
    func olderWriterRefusedAfterTheStep(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("schema-refused") { section in
            let old = try await Self.open(section, .thisRelease)
            do {
                let token = try await old.acquireWriter(holder: "coordinator of this release")
                try await old.commit(CoordinatorStoreContractTests.checkpoint(1, "before"), fencedBy: token)
                if section["kind"] == "sqlite" {
                    // The file's one writer is the last to open it: the next release migrates at
                    // once (this one is fenced too once that one becomes the writer).
                    let next = try await Self.open(section, NextReleaseSchema.schema)
                    #expect(try await Self.stepRuns(section) == 1)
                    await next.close()
                } else {
                    // A coordinator that did not announce itself (as one of a release before
                    // announcements) cannot hold the step back: the step's own statements, raw.
                    try await StoreSection.execute(section, NextReleaseSchema.schema.steps[0].postgres + ["UPDATE coordinator_schema SET version = 2"])
                }
                await #expect {
                    try await old.commit(CoordinatorStoreContractTests.checkpoint(2, "after"), fencedBy: token)
                } throws: { error in
                    guard case .schemaMigrated(_, let found, let writes) = error as? CoordinatorStoreError else { return false }
                    let words = "\(error)"
                    return found == 2 && writes == 1 && words.contains("migrated its schema to version 2")
                        && words.contains("this coordinator writes version 1 at most: its write was refused, nothing was written")
                }
                #expect(try await old.latestCheckpoint()?.snapshot == Data("before".utf8))
            } catch {
                await old.close()
                throw error
            }
            await old.close()
        }
    }

    @Test("coordinators of the next release opening a version 1 store at once (PostgreSQL; SQLite, one after the other): the last step runs exactly once and each writes version 2", arguments: StoreBackend.allCases)
    func stepRunsOnceUnderConcurrency(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("schema-once") { section in
            // A store of this release, with a checkpoint, left by its coordinator.
            let old = try await Self.open(section, .thisRelease, holder: "coordinator of this release")
            let token = try await old.acquireWriter(holder: "coordinator of this release")
            try await old.commit(CoordinatorStoreContractTests.checkpoint(1, "kept"), fencedBy: token)
            await old.close()
            if section["kind"] == "postgres" { try await StoreSection.waitUntilGone(section, holder: "coordinator of this release") }

            // PostgreSQL: six at once. SQLite: one after the other, in one process (its calls wait
            // for the file's lock on NIO's few blocking-I/O threads, which the other tests of the
            // process share; coordinators are processes of their own), each finding the step done.
            let stores: [any CoordinatorStore]
            if section["kind"] == "sqlite" {
                var opened: [any CoordinatorStore] = []
                do {
                    for index in 0..<3 { opened.append(try await Self.open(section, NextReleaseSchema.schema, holder: "opener \(index)")) }
                } catch {
                    await Self.close(opened)
                    throw error
                }
                stores = opened
            } else {
                // Each outcome kept, so the stores that opened are closed if one did not.
                let outcomes = await withTaskGroup(of: Result<any CoordinatorStore, any Error>.self) { group in
                    for index in 0..<6 {
                        group.addTask {
                            do { return .success(try await Self.open(section, NextReleaseSchema.schema, holder: "opener \(index)")) } catch { return .failure(error) }
                        }
                    }
                    var outcomes: [Result<any CoordinatorStore, any Error>] = []
                    for await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                let opened = outcomes.compactMap { try? $0.get() }
                if let failure = outcomes.first(where: { (try? $0.get()) == nil }) {
                    await Self.close(opened)
                    _ = try failure.get()
                }
                stores = opened
            }
            do {
                #expect(try await Self.stepRuns(section) == 1)
                #expect(try await Self.recordedVersion(section) == 2)
                for store in stores {
                    if let shared = store as? PostgresCoordinatorStore { #expect(shared.writingVersion == 2) }
                }
                // Each can write: the last to take the writer's token commits in version 2.
                let last = try #require(stores.last)
                let latest = try await last.acquireWriter(holder: "the last opener")
                try await last.commit(CoordinatorStoreContractTests.checkpoint(2, "version 2"), fencedBy: latest)
                #expect(try await last.latestCheckpoint()?.snapshot == Data("version 2".utf8))
                #expect(
                    try await StoreSection.integers(section, "SELECT snapshot_bytes FROM coordinator_tree_checkpoint WHERE scope = 'shared'")
                        == [Int64("version 2".utf8.count)])
            } catch {
                await Self.close(stores)
                throw error
            }
            await Self.close(stores)
        }
    }
}
