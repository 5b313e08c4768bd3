import ClusterTestSupport
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Testing
import WorkflowClusterTesting
import WorkflowCluster

/// What only the embedded store does, against real SQLite files (what every store does is in
/// `CoordinatorStoreContractTests`).
@Suite("SQLite coordinator store")
struct SQLiteCoordinatorStoreTests {
    @Test("the file is in WAL mode")
    func writeAheadLog() async throws {
        try await StoreDirectory.with("wal") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let store = try await SQLiteCoordinatorStore.open(path: path)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "x"), fencedBy: token)
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            await store.close()
        }
    }

    @Test("store.sync: full fsyncs every commit (synchronous=FULL) by default, normal sets synchronous=NORMAL; both commit and read back")
    func syncLevels() async throws {
        try await StoreDirectory.with("sync") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            for (sync, level) in [(StoreSettings.Sync.full, 2), (.normal, 1)] {
                let store = try await SQLiteCoordinatorStore.open(path: path, sync: sync)
                #expect(try await store.synchronousLevel() == level)
                let token = try await store.acquireWriter(holder: "test")
                try await store.commit(CoordinatorStoreContractTests.checkpoint(Int64(level), "\(sync)"), fencedBy: token)
                await store.close()
                let reopened = try await SQLiteCoordinatorStore.open(path: path)
                #expect(try await reopened.synchronousLevel() == 2)
                #expect(try await reopened.latestCheckpoint() == CoordinatorStoreContractTests.checkpoint(Int64(level), "\(sync)"))
                await reopened.close()
            }
        }
    }

    @Test("The writing connection caches 8 MiB of pages (the scope index of ~100,000 sessions) and gives back what listing the stored sessions read")
    func commitCacheAndTheListing() async throws {
        try await StoreDirectory.with("cache") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let store = try await SQLiteCoordinatorStore.open(path: path)
            let token = try await store.acquireWriter(holder: "test")
            let sessions = try await Self.commitSessions(500, bytes: 2_048, to: store, fencedBy: token)
            await store.close()
            let reopened = try await SQLiteCoordinatorStore.open(path: path)
            #expect(try await reopened.cache().size == -SQLiteCoordinatorStore.commitCacheKibibytes)
            // Reading every checkpoint fills the cache (500 of 2 KiB: about 1 MiB of pages) …
            for scope in sessions { _ = try await reopened.latestCheckpoint(of: scope) }
            #expect(try await reopened.cache().used > 512 * 1_024)
            // … and the listing gives it back.
            #expect(try await reopened.storedSessions().count == 500)
            let after = try await reopened.cache()
            #expect(after.used < 64 * 1_024)
            #expect(after.size == -SQLiteCoordinatorStore.commitCacheKibibytes)
            await reopened.close()
        }
    }

    /// Commits `count` new sessions' checkpoints of `bytes` each in one transaction.
    @discardableResult
    static func commitSessions(_ count: Int, bytes: Int, to store: SQLiteCoordinatorStore, fencedBy token: FencingToken) async throws -> [CheckpointScope] {
        let batch = (0..<count).map { _ in FencedCheckpoint(CoordinatorCheckpoint(
            scope: .session(SessionID.random()), origin: SessionOrigin(root: "board", props: nil), number: 1, renderingSequence: 1,
            acceptedEvents: 1, snapshot: Data(repeating: 7, count: bytes)), fencedBy: token) }
        for outcome in await store.commit(batch) { try outcome.get() }
        return batch.map(\.checkpoint.scope)
    }

    @Test("SQLite never checkpoints the log inside a commit: a connection of the store's own does, and a checkpoint copies every frame committed")
    func logCheckpointedOffTheCommitPath() async throws {
        try await StoreDirectory.with("wal-checkpoint") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let store = try await SQLiteCoordinatorStore.open(path: path)
            let token = try await store.acquireWriter(holder: "test")
            try await Self.commitSessions(20, bytes: 8_192, to: store, fencedBy: token)
            let (automatic, log, checkpointed, _) = try await store.logCheckpointing()
            #expect(automatic == 0)
            #expect(log > 0 && checkpointed == log, "log \(log), checkpointed \(checkpointed)")
            await store.close()
            let reopened = try await SQLiteCoordinatorStore.open(path: path)
            #expect(try await reopened.storedSessions().count == 20)
            await reopened.close()
        }
    }

    @Test("the write-ahead log stays bounded: once it holds the restart threshold's frames a checkpoint restarts it, and the next commit shrinks its file to the limit, nothing lost")
    func logRestartedAndShrunk() async throws {
        try await StoreDirectory.with("wal-restart") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            let frames = 64
            let store = try await SQLiteCoordinatorStore.open(path: path, logRestartFrames: frames)
            let token = try await store.acquireWriter(holder: "test")
            // One transaction of 20 × 64 KiB: over 300 frames, well past the threshold (the log
            // starts again only at a commit, so none can shrink it before the checkpoint below).
            try await Self.commitSessions(20, bytes: 65_536, to: store, fencedBy: token)
            let walPath = path + "-wal"
            let grown = try #require(try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int)
            #expect(grown > frames * 4_096, "the log's file holds the transaction: \(grown) bytes")
            let (_, log, checkpointed, restarted) = try await store.logCheckpointing()
            #expect(log >= frames && checkpointed == log && restarted, "log \(log), checkpointed \(checkpointed), restarted \(restarted)")
            try await Self.commitSessions(1, bytes: 1_024, to: store, fencedBy: token)
            let shrunk = try #require(try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int)
            #expect(shrunk <= frames * 4_096, "the log's file is back within its limit: \(shrunk) bytes (it held \(grown))")
            await store.close()
            let reopened = try await SQLiteCoordinatorStore.open(path: path)
            #expect(try await reopened.storedSessions().count == 21)
            await reopened.close()
        }
    }

    /// Commits `count` checkpoints of the shared root in turn, numbered from `first`.
    static func commitInTurn(_ count: Int, from first: Int64, to store: SQLiteCoordinatorStore, fencedBy token: FencingToken) async throws {
        for number in first..<(first + Int64(count)) {
            try await store.commit(CoordinatorStoreContractTests.checkpoint(number, "turn \(number)"), fencedBy: token)
        }
    }

    @Test("the store needs no thread of NIO's shared blocking pool: with every one of them held, two stores of one file open, commit, wait for each other's locks and close")
    func independentOfTheSharedBlockingPool() async throws {
        try await StoreDirectory.with("shared-pool") { directory in
            let path = directory.appendingPathComponent("coordinator.sqlite").path
            // Every thread of the pool held until released, or for two minutes at most: a store
            // that needed one would wait that long, and the hold would say so.
            let threads = NIOSingletons.blockingPoolThreadCountSuggestion
            let release = DispatchSemaphore(value: 0)
            let (started, starting) = AsyncStream.makeStream(of: Void.self)
            let holds = (0..<threads).map { _ in
                Task {
                    try await NIOThreadPool.singleton.runIfActive {
                        starting.yield()
                        return release.wait(timeout: .now() + 120) == .timedOut
                    }
                }
            }
            var held = 0
            for await _ in started {
                held += 1
                if held == threads { break }
            }
            let outcome: Result<Void, any Error>
            do {
                let first = try await SQLiteCoordinatorStore.open(path: path)
                let token = try await first.acquireWriter(holder: "first")
                // The second store's opening (a transaction of several statements) while the
                // first commits: each waits for the other's lock on a thread of its own.
                async let committed: Void = Self.commitInTurn(20, from: 1, to: first, fencedBy: token)
                let second = try await SQLiteCoordinatorStore.open(path: path)
                try await committed
                #expect(try await second.latestCheckpoint() == CoordinatorStoreContractTests.checkpoint(20, "turn 20"))
                await second.close()
                await first.close()
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            for _ in 0..<threads { release.signal() }
            for hold in holds { #expect(try await hold.value == false, "a store waited for NIO's shared blocking pool") }
            try outcome.get()
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
