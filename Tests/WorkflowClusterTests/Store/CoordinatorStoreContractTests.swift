import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowCluster

/// What every `CoordinatorStore` promises, checked against each real store: an SQLite file and a
/// private PostgreSQL server (skipped, saying why, where none can be started).
@Suite("Coordinator store contract")
struct CoordinatorStoreContractTests {
    static func checkpoint(_ number: Int64, _ text: String) -> CoordinatorCheckpoint {
        CoordinatorCheckpoint(number: number, renderingSequence: UInt64(number * 10), acceptedEvents: number * 3, snapshot: Data(text.utf8))
    }

    @Test("an empty store has no checkpoint; a committed one is read back after the store is closed and opened again", arguments: StoreBackend.allCases)
    func checkpointSurvivesReopening(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("reopen") { section in
            let store = try await StoreSection.open(section)
            #expect(try await store.latestCheckpoint() == nil)
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(Self.checkpoint(1, "first"), fencedBy: token)
            try await store.commit(Self.checkpoint(2, "second"), fencedBy: token)
            #expect(try await store.latestCheckpoint() == Self.checkpoint(2, "second"))
            await store.close()

            let reopened = try await StoreSection.open(section)
            #expect(try await reopened.latestCheckpoint() == Self.checkpoint(2, "second"))
            await reopened.close()
        }
    }

    @Test("a checkpoint's bytes and numbers come back exactly: every byte value, a megabyte, the largest sequence", arguments: StoreBackend.allCases)
    func checkpointRoundTrips(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("bytes") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let bytes = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
            let big = CoordinatorCheckpoint(number: 7, renderingSequence: UInt64(Int64.max), acceptedEvents: 1 << 40, snapshot: bytes)
            try await store.commit(big, fencedBy: token)
            #expect(try await store.latestCheckpoint() == big)
            let empty = CoordinatorCheckpoint(number: 8, renderingSequence: 0, acceptedEvents: 0, snapshot: Data())
            try await store.commit(empty, fencedBy: token)
            #expect(try await store.latestCheckpoint() == empty)
            await store.close()
        }
    }

    @Test("each new writer gets a higher fencing token; the old writer's commits are refused and change nothing", arguments: StoreBackend.allCases)
    func staleWriterIsFenced(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("fence") { section in
            let old = try await StoreSection.open(section)
            let oldToken = try await old.acquireWriter(holder: "old")
            try await old.commit(Self.checkpoint(11, "old"), fencedBy: oldToken)

            let new = try await StoreSection.open(section)
            let newToken = try await new.acquireWriter(holder: "new")
            #expect(newToken > oldToken)
            await #expect {
                try await old.commit(Self.checkpoint(12, "late write of the deposed writer"), fencedBy: oldToken)
            } throws: { error in
                guard case .fenced(_, let offered, let current) = error as? CoordinatorStoreError else { return false }
                return offered == oldToken && current == newToken
            }
            #expect(try await new.latestCheckpoint() == Self.checkpoint(11, "old"))
            try await new.commit(Self.checkpoint(12, "new"), fencedBy: newToken)
            #expect(try await old.latestCheckpoint() == Self.checkpoint(12, "new"))
            let third = try await StoreSection.open(section)
            #expect(try await third.acquireWriter(holder: "third") > newToken)
            await old.close()
            await new.close()
            await third.close()
        }
    }

    @Test(
        "commits racing a new writer: each either lands before the new writer's token or is refused, and none lands after a refusal",
        arguments: StoreBackend.allCases)
    func commitsRacingANewWriter(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("race") { section in
            let old = try await StoreSection.open(section)
            let oldToken = try await old.acquireWriter(holder: "old")
            let new = try await StoreSection.open(section)
            let lastCommitted = Mutex<Int64>(0)
            let (someCommitted, signal) = AsyncStream.makeStream(of: Void.self)
            let writer = Task {
                defer { signal.finish() }
                // Commits until the first refusal; then one more, which must be refused too.
                var number: Int64 = 1
                while true {
                    do {
                        try await old.commit(Self.checkpoint(number, "old \(number)"), fencedBy: oldToken)
                        lastCommitted.withLock { $0 = number }
                        if number == 3 { signal.finish() }
                        number += 1
                    } catch CoordinatorStoreError.fenced {
                        break
                    }
                }
                await #expect {
                    try await old.commit(Self.checkpoint(number + 1, "after the refusal"), fencedBy: oldToken)
                } throws: { error in
                    if case .fenced = error as? CoordinatorStoreError { true } else { false }
                }
            }
            // The new writer arrives once the old one has committed a few.
            for await _ in someCommitted {}
            let newToken = try await new.acquireWriter(holder: "new")
            try await writer.value
            let committed = lastCommitted.withLock { $0 }
            // The store holds exactly the old writer's last successful commit: nothing refused
            // was written, nothing that succeeded was lost.
            #expect(try await new.latestCheckpoint() == Self.checkpoint(committed, "old \(committed)"))
            try await new.commit(Self.checkpoint(committed + 1, "new"), fencedBy: newToken)
            #expect(try await new.latestCheckpoint() == Self.checkpoint(committed + 1, "new"))
            await old.close()
            await new.close()
        }
    }
}
