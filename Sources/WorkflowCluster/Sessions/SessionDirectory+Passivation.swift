import Foundation
import Logging
import Workflow

/// Passivation and reactivation: an idle session's tree is stopped and kept as a snapshot (in
/// memory, or in the store), and brought back from it when a client asks for it again. See
/// `SessionDirectory`'s "Lifecycle".
extension SessionDirectory {
    /// Passivates every session no client has used for the idle timeout; returns how many.
    @discardableResult
    package func passivateIdle() async -> Int {
        let tasks = lifecycle.beginIdlePassivations(now: clock.now) { [logger] id, hosted in
            Task { await Self.passivate(hosted, id: id, logger: logger) }
        }
        var passivatedCount = 0
        for (id, task) in tasks {
            let outcome = await task.value
            settlePassivation(id, task, outcome)
            if spread != nil { await releaseLease(of: id) }
            guard let passivated = outcome else {
                logger.error("session not passivated: its tree's snapshot does not encode; it keeps running", metadata: ["session": "\(id)"])
                continue
            }
            passivatedCount += 1
            metrics.passivated.increment()
            switch passivated.kept {
            case .memory(let snapshot, _):
                logger.info("session passivated", metadata: ["session": "\(id)", "snapshot-bytes": "\(snapshot.count)"])
            case .store:
                logger.info("session passivated to the store", metadata: ["session": "\(id)"])
            }
        }
        if !tasks.isEmpty { updateGauges() }
        return passivatedCount
    }

    /// Passivates idle sessions every quarter of the idle timeout (and, spread, renews the lease
    /// term) until the task is cancelled.
    package func run() async {
        guard spread != nil else {
            await passivateIdleSessions()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.passivateIdleSessions() }
            group.addTask { await self.keepLeases() }
        }
    }

    /// Passivates idle sessions every quarter of the idle timeout until the task is cancelled.
    func passivateIdleSessions() async {
        let period = max(settings.idleTimeout / 4, .milliseconds(10))
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: period)
            } catch {
                return
            }
            await passivateIdle()
        }
    }

    /// Ends a passivation of `id` with its outcome, unless something else settled it first (a
    /// use reactivated it, an end removed it): passivated, or running again.
    func settlePassivation(_ id: SessionID, _ task: Task<PassivatedSession?, Never>, _ outcome: PassivatedSession?) {
        _ = lifecycle.settlePassivation(id, task, outcome, now: clock.now)
    }

    /// Ends a reactivation of `id` with its outcome, unless an end (or the coordinator's stop)
    /// removed it first, and then stops what it started: active, or passivated as before and the
    /// failure thrown (forgotten, if the store no longer holds it).
    func settleReactivation(
        _ id: SessionID, _ task: Task<Result<Hosted, SessionError>, Never>, _ outcome: Result<Hosted, SessionError>
    ) throws(SessionError) {
        defer { updateGauges() }
        guard let root = try lifecycle.settleReactivation(id, task, outcome, now: clock.now) else { return }
        metrics.reactivated.increment()
        logger.info("session reactivated", metadata: ["session": "\(id)", "root": "\(root)"])
    }

    /// Stops `active`'s host and keeps its tree: with a store, its stop commits its last
    /// checkpoint (while the tree still runs) and nothing stays in memory; without one, its
    /// snapshot is kept in memory (`nil`: it does not encode, and the session keeps running).
    static func passivate(_ active: Hosted, id: SessionID, logger: Logger) async -> PassivatedSession? {
        if let committer = active.committer {
            await active.session.stop()
            if let failure = committer.failure {
                logger.warning(
                    "session passivated after its store failed: it resumes from its last committed checkpoint, which holds every event it answered",
                    metadata: ["session": "\(id)", "failure": "\(failure)"])
            }
            return PassivatedSession(kept: .store, sequence: active.session.latestRendering.sequence)
        }
        // No client holds it, and none can reach it until the snapshot is taken.
        let snapshot = await active.session.snapshot()
        // A tree whose snapshot does not encode is kept running: passivating it would restart
        // it from its initial state.
        guard let encoded = try? snapshot.encoded() else { return nil }
        let sequence = active.session.latestRendering.sequence
        await active.session.stop()
        return PassivatedSession(kept: .memory(snapshot: encoded, props: active.props), sequence: sequence)
    }

    /// Reads `id`'s kept tree (from memory or the store) and starts its host from it.
    nonisolated func reactivate(
        _ id: SessionID, root: String, _ passivated: PassivatedSession, token: FencingToken?
    ) async -> Result<Hosted, SessionError> {
        do throws(SessionError) {
            let encoded: Data
            let props: Data?
            var restored: CoordinatorCheckpoint?
            switch passivated.kept {
            case .memory(let snapshot, let kept):
                encoded = snapshot
                props = kept
            case .store:
                guard let durability else { throw .unavailable("this session's tree is in a store this coordinator does not have") }
                let checkpoint: CoordinatorCheckpoint?
                do {
                    checkpoint = try await durability.store.latestCheckpoint(of: .session(id))
                } catch {
                    logger.error("session not reactivated: its tree cannot be read from the store: \(error)", metadata: ["session": "\(id)"])
                    throw .unavailable("this session's tree cannot be read from the store (\(error)); it is kept: try again later")
                }
                // Removed meanwhile (ended through another coordinator sharing the store).
                guard let checkpoint else { throw .unknownSession(id.text) }
                encoded = checkpoint.snapshot
                props = checkpoint.origin?.props
                restored = checkpoint
            }
            let snapshot: TreeSnapshot
            do {
                snapshot = try TreeSnapshot.decode(from: encoded)
            } catch {
                // Never a silent restart from the initial state: the kept tree stays kept.
                logger.error("session not reactivated: its kept tree cannot be read: \(error)", metadata: ["session": "\(id)"])
                throw .unavailable("this session's kept tree cannot be read; it is kept as it is")
            }
            let committer = committer(for: id, token: token, origin: SessionOrigin(root: root, props: props), restored: restored)
            let session: any ClusterRootSession
            do {
                session = try await start(id, root: root, props: props, snapshot: snapshot, sequence: passivated.sequence, durability: committer)
            } catch .unknownRoot(let name, let known) {
                throw .unavailable(
                    "this session's root \"\(name)\" is not registered in this coordinator (known: \(known.joined(separator: ", "))); it is kept")
            }
            return .success(Hosted(session: session, committer: committer, props: durability == nil ? props : nil))
        } catch {
            return .failure(error)
        }
    }
}
