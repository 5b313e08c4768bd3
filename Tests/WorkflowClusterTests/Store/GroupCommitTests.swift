import ClusterTestSupport
import Foundation
import Synchronization
import Testing
import WorkflowCluster

/// The group commit across trees: checkpoints of many sessions (and the shared root) that arrive
/// together share one transaction, each fenced by its own token, against each real store.
@Suite("Group commit across sessions")
struct GroupCommitTests {
    static func checkpoint(_ scope: CheckpointScope, _ number: Int64, _ text: String) -> CoordinatorCheckpoint {
        let origin: SessionOrigin? = if case .session = scope { SessionOrigin(root: "board", props: Data("{\"p\":\(number)}".utf8)) } else { nil }
        return CoordinatorCheckpoint(
            scope: scope, origin: origin, number: number, renderingSequence: UInt64(number), acceptedEvents: number, snapshot: Data(text.utf8))
    }

    static func isFenced(_ result: Result<Void, CoordinatorStoreError>) -> Bool {
        if case .failure(.fenced) = result { true } else { false }
    }

    /// Runs `body` with two connections to a fresh store of `backend`: a deposed writer's and
    /// the current writer's, each with its token.
    static func withDeposedWriter(
        _ backend: StoreBackend, _ label: String,
        _ body: (_ old: any CoordinatorStore, _ oldToken: FencingToken, _ current: any CoordinatorStore, _ token: FencingToken) async throws -> Void
    ) async throws {
        try await backend.withEmptyStore(label) { section in
            let old = try await StoreSection.open(section)
            let new: any CoordinatorStore
            do {
                let oldToken = try await old.acquireWriter(holder: "old")
                new = try await StoreSection.open(section)
                do {
                    try await body(old, oldToken, new, try await new.acquireWriter(holder: "new"))
                } catch {
                    await new.close()
                    throw error
                }
            } catch {
                await old.close()
                throw error
            }
            await old.close()
            await new.close()
        }
    }

    /// A store answering a batch with the wrong number of outcomes fails the commit in words
    /// (every checkpoint of the batch), and the next commit gets its own store's answer.
    @Test("a store answering the wrong number of outcomes fails the commit, saying how many it answered")
    func miscountedOutcomes() async throws {
        let group = GroupCommit(storeName: "test store")
        let fenced = FencedCheckpoint(Self.checkpoint(.shared, 1, "{}"), fencedBy: FencingToken(rawValue: 1))
        for answered in [0, 2] {
            let result = await group.commit(fenced) { _ in Array(repeating: .success(()), count: answered) }
            guard case .failure(.failed(let store, let operation, let reason)) = result else {
                Issue.record("expected a failure, got \(result)")
                continue
            }
            #expect(store == "test store")
            #expect(operation == "committing 1 checkpoints in one transaction")
            #expect(reason == "the store answered \(answered) outcomes")
        }
        let answered = await group.commit(fenced) { batch in batch.map { _ in .success(()) } }
        #expect((try? answered.get()) != nil)
    }

    @Test("checkpoints of several sessions and the shared root in one transaction: all stored, read back with their origins", arguments: StoreBackend.allCases)
    func severalTreesInOneTransaction(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("group") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let scopes: [CheckpointScope] = [.shared] + (0..<5).map { _ in .session(SessionID.random()) }
            let batch = scopes.map { FencedCheckpoint(Self.checkpoint($0, 1, "first of \($0.key)"), fencedBy: token) }
            let outcomes = await store.commit(batch)
            #expect(outcomes.count == scopes.count)
            for outcome in outcomes { try outcome.get() }
            for scope in scopes { #expect(try await store.latestCheckpoint(of: scope) == Self.checkpoint(scope, 1, "first of \(scope.key)")) }
            #expect(try await store.storedSessions().count == 5)
            // A later transaction updates each (the origin stays as the first commit stored it).
            let second = scopes.map { FencedCheckpoint(Self.checkpoint($0, 2, "second"), fencedBy: token) }
            for outcome in await store.commit(second) { try outcome.get() }
            for scope in scopes { #expect(try await store.latestCheckpoint(of: scope)?.snapshot == Data("second".utf8)) }
            await store.close()
        }
    }

    @Test("a stale token in a transaction is refused alone: the others in it are stored", arguments: StoreBackend.allCases)
    func staleTokenRefusedAlone(backend: StoreBackend) async throws {
        try await Self.withDeposedWriter(backend, "group-fence") { _, oldToken, new, newToken in
            let (first, second) = (SessionID.random(), SessionID.random())
            // Through one connection: one checkpoint with the current token, one with the deposed
            // writer's.
            let outcomes = await new.commit([
                FencedCheckpoint(Self.checkpoint(.session(first), 1, "kept"), fencedBy: newToken),
                FencedCheckpoint(Self.checkpoint(.session(second), 1, "deposed"), fencedBy: oldToken),
            ])
            try outcomes[0].get()
            guard case .failure(.fenced(_, let offered, let current)) = outcomes[1] else {
                Issue.record("the stale token's checkpoint was not refused: \(outcomes[1])")
                return
            }
            #expect(offered == oldToken && current == newToken)
            #expect(try await new.latestCheckpoint(of: .session(first))?.snapshot == Data("kept".utf8))
            #expect(try await new.latestCheckpoint(of: .session(second)) == nil)
        }
    }

    @Test("spread sessions: one session taken by another coordinator is refused by its lease's token; the others in the transaction are stored")
    func leaseFencedSessionRefusedAlone() async throws {
        try await PostgresSessionLeaseTests.withStores { a, b in
            let ids = (0..<3).map { _ in SessionID.random() }
            let (termA, termB) = (try await PostgresSessionLeaseTests.term(a, "a"), try await PostgresSessionLeaseTests.term(b, "b"))
            var tokens: [FencingToken] = []
            for id in ids {
                tokens.append(try PostgresSessionLeaseTests.token(try await a.acquireSessionLease(id, term: termA, creating: true)))
            }
            for outcome in await a.commit(zip(ids, tokens).map { FencedCheckpoint(Self.checkpoint(.session($0), 1, "a1"), fencedBy: $1) }) {
                try outcome.get()
            }
            // The middle session moves to b.
            try await a.releaseSessionLease(ids[1], token: tokens[1])
            let taken = try PostgresSessionLeaseTests.token(
                try await b.acquireSessionLease(ids[1], term: termB, creating: false))
            let outcomes = await a.commit(zip(ids, tokens).map { FencedCheckpoint(Self.checkpoint(.session($0), 2, "a2"), fencedBy: $1) })
            try outcomes[0].get()
            try outcomes[2].get()
            guard case .failure(.fenced(_, let offered, let current)) = outcomes[1] else {
                Issue.record("the moved session's checkpoint was not refused: \(outcomes[1])")
                return
            }
            #expect(offered == tokens[1] && current == taken)
            #expect(try await b.latestCheckpoint(of: .session(ids[0]))?.snapshot == Data("a2".utf8))
            #expect(try await b.latestCheckpoint(of: .session(ids[1]))?.snapshot == Data("a1".utf8))
            #expect(try await b.latestCheckpoint(of: .session(ids[2]))?.snapshot == Data("a2".utf8))
        }
    }

    @Test("commits of many sessions arriving while one runs share the next transaction; a stale token there fails only its own", arguments: StoreBackend.allCases)
    func concurrentCommitsShareOneTransaction(backend: StoreBackend) async throws {
        try await Self.withDeposedWriter(backend, "group-share") { _, oldToken, store, token in
            let group = GroupCommit(storeName: "test")
            let gate = Gate()
            let sizes = Mutex<[Int]>([])
            // The store's transaction, held at the first until the others wait behind it.
            let transaction: @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] = { batch in
                let first = sizes.withLock { sizes in
                    sizes.append(batch.count)
                    return sizes.count == 1
                }
                if first { await gate.wait() }
                return await store.commit(batch)
            }
            let ids = (0..<20).map { _ in SessionID.random() }
            let stale = ids[7]
            let outcomes = try await withThrowingTaskGroup(of: (CheckpointScope, Result<Void, CoordinatorStoreError>).self) { tasks in
                tasks.addTask {
                    (.shared, await group.commit(FencedCheckpoint(Self.checkpoint(.shared, 1, "root"), fencedBy: token), through: transaction))
                }
                while sizes.withLock({ $0.isEmpty }) { await Task.yield() }
                for id in ids {
                    tasks.addTask {
                        let fenced = FencedCheckpoint(Self.checkpoint(.session(id), 1, "event"), fencedBy: id == stale ? oldToken : token)
                        return (.session(id), await group.commit(fenced, through: transaction))
                    }
                }
                while group.waitingCount < ids.count { await Task.yield() }
                await gate.open()
                var outcomes: [CheckpointScope: Result<Void, CoordinatorStoreError>] = [:]
                for try await (scope, outcome) in tasks { outcomes[scope] = outcome }
                return outcomes
            }
            // One transaction for the first, one for all twenty that waited behind it.
            #expect(sizes.withLock { $0 } == [1, ids.count])
            #expect(group.transactions == 2)
            try outcomes[.shared]?.get()
            for id in ids where id != stale {
                try outcomes[.session(id)]?.get()
                #expect(try await store.latestCheckpoint(of: .session(id))?.snapshot == Data("event".utf8))
            }
            #expect(outcomes[.session(stale)].map(Self.isFenced) == true)
            #expect(try await store.latestCheckpoint(of: .session(stale)) == nil)
        }
    }

    @Test("the same tree's checkpoints never share a transaction, and a batch is capped: the rest go in the next")
    func oneCheckpointPerTreeAndCapped() async throws {
        try await StoreBackend.sqlite.withEmptyStore("group-cap") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let group = GroupCommit(storeName: "test", maximumBatch: 2)
            let gate = Gate()
            let batches = Mutex<[[CheckpointScope]]>([])
            let transaction: @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] = { batch in
                let first = batches.withLock { batches in
                    batches.append(batch.map(\.checkpoint.scope))
                    return batches.count == 1
                }
                if first { await gate.wait() }
                return await store.commit(batch)
            }
            let (a, b) = (CheckpointScope.session(SessionID.random()), CheckpointScope.session(SessionID.random()))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.commit(FencedCheckpoint(Self.checkpoint(.shared, 1, "root"), fencedBy: token), through: transaction).get() }
                while batches.withLock({ $0.isEmpty }) { await Task.yield() }
                // Queued in this order: a, a (again), b, shared; a batch takes two, one per tree.
                for (index, scope) in [a, a, b, .shared].enumerated() {
                    tasks.addTask {
                        try await group.commit(FencedCheckpoint(Self.checkpoint(scope, Int64(index + 2), "n"), fencedBy: token), through: transaction).get()
                    }
                    while group.waitingCount < index + 1 { await Task.yield() }
                }
                await gate.open()
                try await tasks.waitForAll()
            }
            #expect(batches.withLock { $0 } == [[.shared], [a, b], [a, .shared]])
            #expect(try await store.latestCheckpoint(of: a)?.number == 3)
            #expect(try await store.latestCheckpoint(of: .shared)?.number == 5)
            await store.close()
        }
    }

    @Test("a transaction runs in a task of its own, never in a committing tree's task, and nothing waits once it ends")
    func transactionInATaskOfItsOwn() async throws {
        // A tree's committer task lives as long as the tree, and a task's allocator keeps the
        // memory of its deepest stack until it ends: the store's calls run in the callers' tasks
        // kept about 4 KiB per session (docs/BENCHMARKS.md).
        try await StoreBackend.sqlite.withEmptyStore("group-task") { section in
            let store = try await StoreSection.open(section)
            let token = try await store.acquireWriter(holder: "test")
            let group = GroupCommit(storeName: "test")
            let gate = Gate()
            let transactionTasks = Mutex<[Int]>([])
            let transaction: @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>] = { batch in
                let first = transactionTasks.withLock { tasks in
                    tasks.append(withUnsafeCurrentTask { $0?.hashValue ?? 0 })
                    return tasks.count == 1
                }
                if first { await gate.wait() }
                return await store.commit(batch)
            }
            let scopes: [CheckpointScope] = [.shared] + (0..<4).map { _ in .session(SessionID.random()) }
            let callerTasks = try await withThrowingTaskGroup(of: Int.self) { tasks in
                for (index, scope) in scopes.enumerated() {
                    tasks.addTask {
                        let caller = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
                        try await group.commit(FencedCheckpoint(Self.checkpoint(scope, 1, "n"), fencedBy: token), through: transaction).get()
                        return caller
                    }
                    // The first leads (held at the gate); the others queue for the next transaction.
                    while transactionTasks.withLock({ $0.isEmpty }) || group.waitingCount < index { await Task.yield() }
                }
                await gate.open()
                return try await tasks.reduce(into: [Int]()) { $0.append($1) }
            }
            let ran = transactionTasks.withLock { $0 }
            #expect(ran.count == 2)
            #expect(!ran.contains(0) && !callerTasks.contains(0))
            #expect(Set(ran).isDisjoint(with: callerTasks))
            #expect(group.waitingCount == 0)
            for scope in scopes { #expect(try await store.latestCheckpoint(of: scope)?.number == 1) }
            await store.close()
        }
    }
}

/// Holds tasks until it is opened.
private actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}
