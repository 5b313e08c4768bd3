import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster

/// The schema version a store carries (`StoreSchema`): recorded when a coordinator opens it, and a
/// store a later release migrated is refused at start, in words, and left as it was.
@Suite("Store schema version")
struct StoreSchemaTests {
    /// The statement that sets the schema version the store at `section` records, raw (as a
    /// later release would have left it).
    static func settingVersion(_ version: Int, _ section: [String: String]) -> String {
        section["kind"] == "sqlite" ? "PRAGMA user_version = \(version)" : "UPDATE coordinator_schema SET version = \(version) WHERE id = 1"
    }

    /// Opens the store at `section` as its writer and commits checkpoint 1 of the shared root.
    static func commitCheckpoint(_ section: [String: String]) async throws {
        let store = try await StoreSection.open(section)
        do {
            let token = try await store.acquireWriter(holder: "this build")
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "kept"), fencedBy: token)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// The number of the shared root's latest checkpoint, read by opening the store again.
    static func reopenedCheckpointNumber(_ section: [String: String]) async throws -> Int64? {
        let store = try await StoreSection.open(section)
        do {
            let checkpoint = try await store.latestCheckpoint()
            await store.close()
            return checkpoint?.number
        } catch {
            await store.close()
            throw error
        }
    }

    @Test("a store of a later release's schema is refused at start in words, untouched; of this build's, opened with its checkpoint", arguments: StoreBackend.allCases)
    func newerStoreRefused(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("newer-schema") { section in
            try await Self.commitCheckpoint(section)

            try await StoreSection.execute(section, [Self.settingVersion(StoreSchema.thisRelease.version + 1, section)])
            await #expect {
                _ = try await StoreSection.open(section)
            } throws: { error in
                guard case .cannotOpen(_, let reason) = error as? CoordinatorStoreError else { return false }
                return reason.contains("the store's schema is version \(StoreSchema.thisRelease.version + 1), newer than this coordinator's (version \(StoreSchema.thisRelease.version))")
            }
            // Refused twice: the first refusal did not lower the version it found.
            await #expect(throws: CoordinatorStoreError.self) { _ = try await StoreSection.open(section) }

            // Back to this build's version (what the later release had not in fact changed):
            // the store opens with its checkpoint, as it was.
            try await StoreSection.execute(section, [Self.settingVersion(StoreSchema.thisRelease.version, section)])
            #expect(try await Self.reopenedCheckpointNumber(section) == 1)
        }
    }

    @Test("a store written before versions were recorded is opened and gets this build's version", arguments: StoreBackend.allCases)
    func unversionedStoreMigrated(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("unversioned-schema") { section in
            try await Self.commitCheckpoint(section)
            // As an earlier build left it: no version.
            let unversioned = section["kind"] == "sqlite" ? "PRAGMA user_version = 0" : "DROP TABLE coordinator_schema"
            try await StoreSection.execute(section, [unversioned])
            #expect(try await Self.reopenedCheckpointNumber(section) == 1)
            // Recorded again: a later version now is refused (it would not be, without a record).
            try await StoreSection.execute(section, [Self.settingVersion(StoreSchema.thisRelease.version + 1, section)])
            await #expect(throws: CoordinatorStoreError.self) { _ = try await StoreSection.open(section) }
        }
    }
}
