import ClusterTestSupport
import Foundation
import Logging
import RemoteTestSupport
import Testing
import WorkflowClusterTesting
import Workflow
@testable import WorkflowCluster

/// A root session with a store: an event is answered only once a committed checkpoint
/// reflects it, renderings are published only once committed, and a session started from the
/// store's latest checkpoint has every answered event exactly once.
@Suite("Durable root session")
struct DurableRootSessionTests {
    /// A tally session whose accepted events go to the store `section` names.
    static func start(_ section: [String: String]) async throws -> (WorkflowRootSession<TallyWorkflow>, OpenedCoordinatorStore) {
        let logger = Logger(label: "test.store")
        let opened = try #require(try await OpenedCoordinatorStore.open(StoreSection.settings(section), holder: "test", logger: logger))
        let committer = CheckpointCommitter(store: opened.store, token: opened.token, restored: opened.checkpoint, logger: logger)
        let session = WorkflowRootSession(
            name: "tally", workflow: TallyWorkflow(), snapshot: opened.snapshot, loop: nil, observers: [], frames: nil, logger: logger,
            retainedTokens: 4096, durability: committer)
        return (session, opened)
    }

    /// The tally's count in the store's latest checkpoint.
    static func committedCount(in section: [String: String]) async throws -> Int? {
        let store = try await StoreSection.open(section)
        let latest: CoordinatorCheckpoint?
        do {
            latest = try await store.latestCheckpoint()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        guard let checkpoint = latest else { return nil }
        let snapshot = try TreeSnapshot.decode(from: checkpoint.snapshot)
        return try JSONDecoder().decode(Int.self, from: try #require(snapshot.state))
    }

    @Test(
        "every answered event is in the committed checkpoint; no published rendering is ahead of it; a restart has each exactly once",
        arguments: StoreBackend.allCases)
    func answeredMeansCommitted(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("session") { store in
            let (session, opened) = try await Self.start(store)
            let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
            let reader = Task {
                var seen: [(sequence: UInt64, count: Int)] = []
                for await rendering in session.renderings() {
                    let count = try JSONDecoder().decode(TallyJSON.self, from: rendering.json).count
                    // Published only once committed: the store already holds at least this count.
                    #expect(try await Self.committedCount(in: store) ?? 0 >= count)
                    seen.append((rendering.sequence, count))
                    if count == 200 { break }
                }
                return seen
            }
            // 200 events from 20 concurrent senders: they share commits (group commit).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        for _ in 0..<10 {
                            try await session.send(event: Data("1".utf8), to: add)
                            // Answered: durable now, whatever happens next.
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.committedCount(in: store) == 200)
            let seen = try await reader.value
            #expect(seen.map(\.count) == seen.map(\.count).sorted(), "a client saw the count go backwards: \(seen)")
            let checkpoint = try #require(try await opened.store.latestCheckpoint())
            #expect(checkpoint.acceptedEvents == 200)
            #expect(checkpoint.number < 200, "200 events in \(checkpoint.number) commits: no group commit")
            let lastSequence = session.latestRendering.sequence
            await session.stop()
            await opened.store.close()

            let (restarted, reopened) = try await Self.start(store)
            let first = restarted.latestRendering
            #expect(try JSONDecoder().decode(TallyJSON.self, from: first.json).count == 200)
            #expect(first.sequence > lastSequence, "sequence went backwards across the restart")
            await restarted.stop()
            await reopened.store.close()
        }
    }

    @Test("a deposed writer's events are answered not-durable", arguments: StoreBackend.allCases)
    func fencedSessionRefuses(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("fenced") { store in
            let (session, opened) = try await Self.start(store)
            let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
            try await session.send(event: Data("1".utf8), to: add)
            let newer = try await StoreSection.open(store)
            _ = try await newer.acquireWriter(holder: "newer")
            await #expect {
                try await session.send(event: Data("1".utf8), to: add)
            } throws: { error in
                guard case .notDurable(let token, _) = error as? RootEventError else { return false }
                return token == add
            }
            #expect(try await Self.committedCount(in: store) == 1)
            await session.stop()
            await opened.store.close()
            await newer.close()
        }
    }
}
