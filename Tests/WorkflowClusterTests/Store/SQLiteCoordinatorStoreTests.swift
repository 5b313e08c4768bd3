import ClusterTestSupport
import Foundation
import Testing
import WorkflowClusterTesting
import WorkflowCluster

/// The embedded store against real SQLite files: checkpoints survive closing and reopening,
/// every new writer gets a higher fencing token and a stale writer's commit is refused.
@Suite("SQLite coordinator store")
struct SQLiteCoordinatorStoreTests {
    static func checkpoint(_ number: Int64, _ text: String) -> CoordinatorCheckpoint {
        CoordinatorCheckpoint(number: number, renderingSequence: UInt64(number * 10), acceptedEvents: number * 3, snapshot: Data(text.utf8))
    }

    @Test("a committed checkpoint is read back after the store is closed and opened again")
    func checkpointSurvivesReopening() async throws {
        try await StoreDirectory.with("reopen") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let store = try await SQLiteCoordinatorStore.open(path: path)
            #expect(try await store.latestCheckpoint() == nil)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(Self.checkpoint(1, "first"), fencedBy: token)
            try await store.commit(Self.checkpoint(2, "second"), fencedBy: token)
            #expect(try await store.latestCheckpoint() == Self.checkpoint(2, "second"))
            await store.close()

            let reopened = try await SQLiteCoordinatorStore.open(path: path)
            #expect(try await reopened.latestCheckpoint() == Self.checkpoint(2, "second"))
            await reopened.close()
        }
    }

    @Test("each new writer gets a higher fencing token; the old writer's commits are refused and change nothing")
    func staleWriterIsFenced() async throws {
        try await StoreDirectory.with("fence") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let old = try await SQLiteCoordinatorStore.open(path: path)
            let oldToken = try await old.acquireWriter(holder: "old")
            try await old.commit(Self.checkpoint(1, "old"), fencedBy: oldToken)

            let new = try await SQLiteCoordinatorStore.open(path: path)
            let newToken = try await new.acquireWriter(holder: "new")
            #expect(newToken > oldToken)
            await #expect(throws: CoordinatorStoreError.fenced(store: path, offered: oldToken, current: newToken)) {
                try await old.commit(Self.checkpoint(2, "late write of the deposed writer"), fencedBy: oldToken)
            }
            #expect(try await new.latestCheckpoint() == Self.checkpoint(1, "old"))
            try await new.commit(Self.checkpoint(2, "new"), fencedBy: newToken)
            #expect(try await old.latestCheckpoint() == Self.checkpoint(2, "new"))
            await old.close()
            await new.close()
        }
    }

    @Test("the file is in WAL mode")
    func writeAheadLog() async throws {
        try await StoreDirectory.with("wal") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let store = try await SQLiteCoordinatorStore.open(path: path)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(Self.checkpoint(1, "x"), fencedBy: token)
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            await store.close()
        }
    }

    @Test("a missing directory, a directory and a file that is not a database cannot be opened, in words")
    func unopenable() async throws {
        try await StoreDirectory.with("bad") { directory in
            let missing = directory.appendingPathComponent("no-such-dir/coordinator.sqlite").path
            await #expect {
                _ = try await SQLiteCoordinatorStore.open(path: missing)
            } throws: { error in
                guard case .cannotOpen(let store, let reason) = error as? CoordinatorStoreError else { return false }
                return store == missing && reason.contains("does not exist")
            }
            await #expect {
                _ = try await SQLiteCoordinatorStore.open(path: directory.path)
            } throws: { error in
                guard case .cannotOpen(_, let reason) = error as? CoordinatorStoreError else { return false }
                return reason.contains("directory")
            }
            let garbage = directory.appendingPathComponent("garbage.sqlite")
            try Data(repeating: 0x41, count: 4096).write(to: garbage)
            await #expect {
                _ = try await SQLiteCoordinatorStore.open(path: garbage.path)
            } throws: { error in
                guard case .cannotOpen(let store, let reason) = error as? CoordinatorStoreError else { return false }
                return store == garbage.path && reason.contains("not a database")
            }
        }
    }
}
