import Foundation
import Logging

/// Spread sessions (`SessionSpread`): taking a session over from the store, the leases taken
/// under this coordinator's one lease term, the term's renewal, and stopping the sessions of a
/// term that ended. See `SessionDirectory`'s "Spread over coordinators".
extension SessionDirectory {
    /// Takes the session `id` over from the store (spread mode): its lease, if it was given up or
    /// its owner's term ended, and an entry to reactivate it from its checkpoint; throws
    /// `.ownedElsewhere` if a live coordinator owns it, `.unknownSession` if the store holds none.
    func claim(_ id: SessionID) async throws(SessionError) {
        guard spread != nil, let durability else { return }
        lifecycle.claimBegan(id)
        defer { lifecycle.claimEnded(id) }
        let attempt: SessionLeaseAttempt
        let checkpoint: CoordinatorCheckpoint?
        do {
            attempt = try await takeLease(of: id, creating: false)
            guard case .acquired = attempt else { return try throwing(attempt, id) }
            checkpoint = try await durability.store.latestCheckpoint(of: .session(id))
        } catch let error as SessionError {
            throw error
        } catch {
            logger.error("session not taken over: the store did not answer: \(error)", metadata: ["session": "\(id)"])
            throw .unavailable("this session's lease cannot be read or taken (\(error)); try again later")
        }
        guard case .acquired(let token) = attempt else { return }
        switch lifecycle.claimed(id, token: token, root: checkpoint?.origin?.root, sequence: checkpoint?.renderingSequence ?? 0) {
        case .alreadyHere:
            return
        case .refused(let error, let givesUpLease):
            if givesUpLease { await releaseLease(of: id) }
            throw error
        case .taken:
            updateGauges()
            logger.notice("session taken over from the store", metadata: ["session": "\(id)", "token": "\(token)"])
        }
    }

    /// The refusal of a lease attempt that did not acquire.
    func throwing(_ attempt: SessionLeaseAttempt, _ id: SessionID) throws(SessionError) {
        switch attempt {
        case .acquired: return
        case .heldBy(_, let gateway): throw .ownedElsewhere(gateway: gateway)
        case .noSuchSession: throw .unknownSession(id.text)
        case .termEnded: throw .unavailable("this coordinator's lease term ended; try again")
        }
    }

    /// Takes the lease of `id` under this coordinator's live term (beginning one if none is),
    /// and records it when acquired. A term that ended meanwhile is replaced once and the lease
    /// asked for again.
    func takeLease(of id: SessionID, creating: Bool) async throws(CoordinatorStoreError) -> SessionLeaseAttempt {
        guard let spread else { return .noSuchSession }
        for _ in 0..<2 {
            let term = try await liveTerm()
            let attempt = try await spread.store.acquireSessionLease(id, term: term, creating: creating)
            switch attempt {
            case .termEnded:
                await drop(lifecycle.termEnded(term))
            case .acquired(let token):
                if lifecycle.leaseAcquired(id, token: token, under: term) { return attempt }
            case .heldBy, .noSuchSession:
                return attempt
            }
        }
        return .termEnded
    }

    /// The term this coordinator takes leases under: the live one, or a new one begun in the
    /// store (one request however many ask at once; the sessions of a term that lapsed are
    /// stopped first).
    func liveTerm() async throws(CoordinatorStoreError) -> SessionLeaseTerm {
        await drop(absorbRenewals() + lifecycle.expire(now: clock.now))
        if let term = lifecycle.liveTerm(now: clock.now) { return term }
        let beginning: Task<Result<(SessionLeaseTerm, ContinuousClock.Instant), CoordinatorStoreError>, Never>
        if let inFlight = termBeginning {
            beginning = inFlight
        } else if let spread {
            let clock = clock
            beginning = Task {
                let asked = clock.now
                do throws(CoordinatorStoreError) {
                    let term = try await spread.store.beginSessionLeaseTerm(
                        holder: spread.holder, gateway: spread.settings.advertisedURL, for: spread.settings.lease)
                    return .success((term, asked))
                } catch {
                    return .failure(error)
                }
            }
            termBeginning = beginning
        } else {
            preconditionFailure("a lease term is asked for without spread sessions")
        }
        let outcome = await beginning.value
        if termBeginning == beginning { termBeginning = nil }
        let (term, asked) = try outcome.get()
        await drop(lifecycle.termBegan(term, askedAt: asked))
        if lifecycle.leaseTerm == term { renewer?.keep(term) }
        if lifecycle.leaseTerm == term { logger.info("session lease term begun", metadata: ["term": "\(term.number)"]) }
        return term
    }

    /// Gives the lease of `id` up, if this coordinator holds it (a failure is logged: the lease
    /// then runs out by itself). A use of `id` meanwhile waits for it (`awaitRelease(of:)`).
    func releaseLease(of id: SessionID) async {
        guard let spread, let token = lifecycle.giveUpLease(of: id) else { return }
        let (store, logger) = (spread.store, logger)
        let release = Task {
            do {
                try await store.releaseSessionLease(id, token: token)
            } catch {
                logger.warning("a session's lease was not given up (it runs out instead): \(error)", metadata: ["session": "\(id)"])
            }
        }
        releases[id] = release
        await release.value
        if releases[id] == release { releases[id] = nil }
        lifecycle.leaseGivenUp(id)
    }

    /// Waits until no release of `id`'s lease is under way.
    func awaitRelease(of id: SessionID) async {
        while lifecycle.isReleasing(id), let release = releases[id] { await release.value }
    }

    /// Stops every session when the term ended (another coordinator may take them) or lapsed
    /// unrenewed, checked every renewal interval; the renewals themselves are the renewer's, on
    /// its event loop (`SessionTermRenewer`), so a busy concurrency pool delays this check, never
    /// a renewal.
    func keepLeases() async {
        defer { renewer?.stop() }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: renewalInterval)
            } catch {
                return
            }
            await drop(absorbRenewals() + lifecycle.expire(now: clock.now))
        }
    }

    /// Reads what the renewer found into the lifecycle: the latest renewal of the term (it
    /// counts from when it was asked), or its end; returns the sessions to stop.
    func absorbRenewals() -> [Lifecycle.Slot] {
        guard let report = renewer?.latest(), report.term == lifecycle.leaseTerm else { return [] }
        if report.ended {
            logger.warning("this coordinator's session lease term ended in the store", metadata: ["term": "\(report.term.number)", "sessions": "\(lifecycle.leasesHeld)"])
            return lifecycle.termEnded(report.term)
        }
        if let renewedAt = report.renewedAt { lifecycle.termRenewed(report.term, askedAt: renewedAt) }
        return []
    }

    /// How often the lease term is renewed: three times per lease.
    var renewalInterval: Duration { lifecycle.leaseBook?.renewalInterval ?? .seconds(1) }

    /// Stops the sessions `lost`, whose leases this coordinator lost: another one may serve them
    /// now (their commits from here are refused by their tokens).
    func drop(_ lost: [Lifecycle.Slot]) async {
        guard !lost.isEmpty else { return }
        updateGauges()
        logger.warning("session leases lost: stopped here, other coordinators take them over", metadata: ["sessions": "\(lost.count)"])
        await Self.stop(lost)
    }
}
