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
        await drop(lifecycle.expire(now: clock.now))
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

    /// Renews this coordinator's lease term, one statement per renewal interval whatever the
    /// sessions it holds; stops every session when the term ended (another coordinator may take
    /// them) or lapsed unrenewed.
    func keepLeases() async {
        guard let spread else { return }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: renewalInterval)
            } catch {
                return
            }
            let asked = clock.now
            if let term = lifecycle.leaseTerm {
                // Not waited for past the renewal interval: if the term lapses meanwhile, its
                // sessions are stopped below all the same.
                let outcome = await FirstOf<Result<Bool, CoordinatorStoreError>>.race(until: asked + renewalInterval) {
                    do throws(CoordinatorStoreError) {
                        return .success(try await spread.store.renewSessionLeaseTerm(term, for: spread.settings.lease))
                    } catch {
                        return .failure(error)
                    }
                }
                switch outcome {
                case .success(true):
                    lifecycle.termRenewed(term, askedAt: asked)
                case .success(false):
                    logger.warning("this coordinator's session lease term ended in the store", metadata: ["term": "\(term.number)", "sessions": "\(lifecycle.leasesHeld)"])
                    await drop(lifecycle.termEnded(term))
                case .failure(let error):
                    logger.warning("cannot renew the session lease term: \(error)", metadata: ["sessions": "\(lifecycle.leasesHeld)"])
                case nil:
                    logger.warning("the session lease term's renewal is not answered in time", metadata: ["sessions": "\(lifecycle.leasesHeld)"])
                }
            }
            await drop(lifecycle.expire(now: clock.now))
        }
    }

    /// How often the lease term is renewed: three times per lease.
    var renewalInterval: Duration { lifecycle.leaseBook?.renewalInterval ?? .seconds(1) }

    /// Stops the sessions `lost`, whose leases this coordinator lost: another one may serve them
    /// now (their commits from here are refused by their tokens).
    func drop(_ lost: [Lifecycle.Slot]) async {
        guard !lost.isEmpty else { return }
        updateGauges()
        logger.warning("session leases lost: stopped here, other coordinators take them over", metadata: ["sessions": "\(lost.count)"])
        for slot in lost { _ = await Self.stop(slot) }
    }
}
