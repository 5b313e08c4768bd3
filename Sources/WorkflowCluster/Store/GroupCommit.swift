import Synchronization

/// Shares one store transaction between every tree whose checkpoint is ready at the same time:
/// the group commit across the shared root and all sessions.
///
/// Each tree's `CheckpointCommitter` batches its own events, but a coordinator hosting many
/// sessions gets its events spread over them: one event per tree per commit, and one
/// transaction (one fsync) per event, if each tree committed alone. A store commits through its
/// `GroupCommit` instead: the first checkpoint to arrive while no transaction runs is committed
/// at once; those arriving while one runs wait and go together in the next
/// (`CoordinatorStore.commit(_:)` with all of them), however many trees they are of. Each keeps
/// its own fencing token, and the store refuses only the checkpoints whose token is stale: one
/// session's lost lease fails that session's commit, never the others' in its transaction.
///
/// No thread or long-lived task of its own: the caller whose checkpoint starts a transaction
/// leads it, in a short task that runs the transaction, answers the others and hands the next
/// batch to the first of the callers that waited for it (so nobody waits for more than the
/// transaction in progress and its own).
package final class GroupCommit: Sendable {
    private struct Waiting {
        var id: UInt64
        var fenced: FencedCheckpoint
        var continuation: CheckedContinuation<Turn, Never>
    }

    /// What a waiting caller is woken with.
    private enum Turn {
        /// Its checkpoint's outcome, in a transaction another caller ran.
        case done(Result<Void, CoordinatorStoreError>)
        /// It runs the next transaction (its checkpoint is in it).
        case lead
    }

    private struct State {
        var waiting: [Waiting] = []
        /// A caller is running a transaction (and will hand the next one on).
        var leading = false
        var nextID: UInt64 = 0
        var transactions: Int64 = 0
    }

    /// The store, as errors name it.
    package let storeName: String
    /// The most checkpoints one transaction takes (the rest go in the next): bounds one
    /// statement's size and the wait of the first in line.
    package let maximumBatch: Int
    private let state = Mutex(State())

    /// A group commit to the store `storeName` names, of at most `maximumBatch` checkpoints per
    /// transaction.
    package init(storeName: String, maximumBatch: Int = StoreSettings.defaultMaxCommitBatch) {
        self.storeName = storeName
        self.maximumBatch = max(1, maximumBatch)
    }

    /// How many transactions it has run (for tests and operators).
    package var transactions: Int64 { state.withLock { $0.transactions } }

    /// How many checkpoints wait for a transaction now, the running one's excluded (for tests).
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Commits `fenced` together with whatever other trees' checkpoints are waiting, through
    /// `transaction` (the store's commit of many in one transaction: one result per checkpoint,
    /// in order); returns once its transaction has ended, with its own outcome.
    package func commit(
        _ fenced: FencedCheckpoint,
        through transaction: @escaping @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>]
    ) async -> Result<Void, CoordinatorStoreError> {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let lead = state.withLock { state -> Bool in
                state.waiting.append(Waiting(id: id, fenced: fenced, continuation: continuation))
                if state.leading { return false }
                state.leading = true
                return true
            }
            // Its entry stays in line: as leader it takes it with its batch, never resuming it again.
            if lead { continuation.resume(returning: .lead) }
        }
        switch turn {
        case .done(let result): return result
        case .lead: return await lead(own: id, through: transaction)
        }
    }

    /// Takes one transaction's batch of what waits (the leader's own checkpoint, entry `own`,
    /// first), runs it (`run`) and returns its own outcome.
    private func lead(
        own: UInt64, through transaction: @escaping @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>]
    ) async -> Result<Void, CoordinatorStoreError> {
        let batch = state.withLock { state -> [Waiting] in
            guard let index = state.waiting.firstIndex(where: { $0.id == own }) else { return [] }
            var taken = [state.waiting[index]]
            var scopes: Set = [state.waiting[index].fenced.checkpoint.scope]
            var rest: [Waiting] = []
            // One checkpoint per tree in a transaction: a tree's next one waits for the next.
            for (position, entry) in state.waiting.enumerated() where position != index {
                if taken.count < maximumBatch, scopes.insert(entry.fenced.checkpoint.scope).inserted {
                    taken.append(entry)
                } else {
                    rest.append(entry)
                }
            }
            state.waiting = rest
            state.transactions += 1
            return taken
        }
        // The transaction runs in a task of its own, never in the leader's: a caller is a tree's
        // committer task, which lives as long as its tree, and a task's allocator keeps every slab
        // its deepest stack needed until the task ends, so the store's calls (down into the
        // driver) made once as leader would stay allocated per session (about 2-4 KiB each,
        // measured: docs/BENCHMARKS.md). The short task frees them when it ends. It starts at
        // once on this thread (no hop through the executor's queue) and answers the others
        // itself, so only the leader waits for it to end.
        return await Task.immediate { await self.run(batch, through: transaction) }.value
    }

    /// Commits `batch` in one transaction, answers all but its first entry (the leader's),
    /// hands the next transaction on and returns the first entry's outcome.
    private func run(
        _ batch: [Waiting], through transaction: @Sendable ([FencedCheckpoint]) async -> [Result<Void, CoordinatorStoreError>]
    ) async -> Result<Void, CoordinatorStoreError> {
        var results = await transaction(batch.map(\.fenced))
        if results.count != batch.count || results.isEmpty {
            // Words made only when needed: this runs for every commit.
            let miscounted = CoordinatorStoreError.failed(
                store: storeName, operation: "committing \(batch.count) checkpoints in one transaction",
                reason: "the store answered \(results.count) outcomes")
            results = Array(repeating: .failure(miscounted), count: max(batch.count, 1))
        }
        for (entry, result) in zip(batch, results).dropFirst() { entry.continuation.resume(returning: .done(result)) }
        let next = state.withLock { state -> Waiting? in
            guard let first = state.waiting.first else {
                state.leading = false
                return nil
            }
            return first
        }
        // The next leader's entry stays in line: it takes it with its batch.
        next?.continuation.resume(returning: .lead)
        return results[0]
    }
}

