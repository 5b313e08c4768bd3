/// Every decision of a coordinator's sessions, as a value: which creation is admitted, which
/// session a use finds, reactivates or must claim, which idle sessions passivate, what a lease
/// term's beginning, renewal, end or lapse stops, which takeover is kept, and what `stopAll`
/// stops. `SessionDirectory` drives it (it only awaits the store, the sessions' hosts and the
/// clock, and carries out what each method returns); the coordinator simulation
/// (Tests/WorkflowClusterTests/Simulation) drives the same value with a simulated store and
/// clock, interleaving its steps as the actor's awaits may.
///
/// Each method runs between two awaits of its driver, so what it checks and what it changes are
/// one step: a creation is counted against `maxSessions` from its admission to its insertion, and
/// a creation or takeover that finishes after `stopAll` or after its lease was lost is refused
/// at that step, never inserted behind a check made before an await.
///
/// Generic over what runs a session (`Host`) and what carries out a passivation or a
/// reactivation under way (compared to settle only its own outcome); it reads no clock (every
/// time is given).
package struct SessionLifecycle<Host: Sendable, Passivation: Sendable & Equatable, Reactivation: Sendable & Equatable>: Sendable {
    /// One session's slot.
    package typealias Slot = SessionSlot<Host, Passivation, Reactivation>

    /// One session: the root it hosts and where it is.
    package struct Entry: Sendable {
        /// The root workflow's name.
        package let root: String
        /// Where it is in its lifecycle.
        package var slot: Slot
    }

    /// What a use of a session does next.
    package enum UseStep: Sendable {
        /// Take it over from the store first (spread: no entry here), then ask again.
        case claim
        /// Its lease is being given up (spread: it was just passivated): wait for that, then ask
        /// again. Taking it back before would race the release: the store could take the lease
        /// again for this term (the same token) and then apply the release, leaving this
        /// coordinator serving a session whose lease any other may take.
        case awaitRelease
        /// No such session here: `.unknownSession`.
        case unknown
        /// The directory stopped (`stopAll`): `.unavailable`, never `.unknownSession`, which
        /// would tell the client its session is gone.
        case stopping
        /// It runs: use this host (counted as a client until `release`).
        case use(Host)
        /// Wait for this passivation, settle it, then ask again.
        case awaitPassivation(Passivation)
        /// Wait for this reactivation (begun now, or before by another use), settle it, then
        /// ask again.
        case awaitReactivation(Reactivation)
    }

    /// How a creation's start ended, once its host runs.
    package enum CreationStep: Sendable, Equatable {
        /// It is in the directory, held by its creator until `release`.
        case inserted
        /// `stopAll` ran while it started: stop its host, give its lease up, refuse.
        case stopping
        /// Spread: its lease was lost while it started (the term ended or lapsed): stop its
        /// host and refuse; another coordinator may own it now.
        case leaseLost
    }

    /// How a takeover from the store ends, once the lease is taken and the checkpoint read.
    package enum ClaimStep: Sendable, Equatable {
        /// It is here, passivated, to reactivate from its checkpoint.
        case taken
        /// Another request took it over meanwhile: nothing to do.
        case alreadyHere
        /// Refused with this error; `givesUpLease`: the lease just taken is given up first.
        case refused(SessionError, givesUpLease: Bool)
    }

    /// How a settled passivation ended.
    package enum PassivationEnd: Sendable, Equatable {
        /// Something else settled it first (a use, an end, a stop): nothing to do.
        case stale
        /// Passivated (spread: and forgotten here, its lease to give up).
        case passivated
        /// Its snapshot did not encode: it runs again.
        case keptRunning
    }

    /// The limits and the idle timeout.
    package let settings: SessionSettings
    private var entries = Table()
    private var idle = IdleSessionQueue()
    private var creations: CreationBudget
    private var creating = 0
    /// Ends under way (removed, not yet answered by the store): their places stay taken, since
    /// an end the store refuses puts its session back.
    private var ending = 0
    private var stopped = false
    /// Spread mode's leases (`nil`: not spread).
    private var leases: SessionLeaseBook?
    /// Sessions whose lease is being given up in the store (`giveUpLease` until `leaseGivenUp`).
    private var releasing: Set<SessionID> = []
    /// Takeovers under way, by session (`claimBegan` until `claimEnded`): a lease they may take
    /// again is not given up meanwhile.
    private var claiming: [SessionID: Int] = [:]

    /// The lifecycle of a directory with `settings`, starting at `now` with the store's
    /// `resumed` sessions, passivated; `leaseDuration` (spread mode): how long its lease term
    /// lasts unrenewed.
    package init(settings: SessionSettings, now: ContinuousClock.Instant, leaseDuration: Duration?, resumed: [(SessionID, root: String, sequence: UInt64)] = []) {
        self.settings = settings
        self.creations = CreationBudget(perSecond: settings.maxCreationsPerSecond, now: now)
        self.leases = leaseDuration.map(SessionLeaseBook.init(lease:))
        for (id, root, sequence) in resumed {
            entries[id] = Entry(root: root, slot: .passivated(PassivatedSession(kept: .store, sequence: sequence)))
        }
    }

    // MARK: - Reading

    /// Whether sessions are spread over coordinators (leases are held).
    package var isSpread: Bool { leases != nil }
    /// Whether `stopAll` ran: nothing is created or taken over after.
    package var isStopped: Bool { stopped }
    /// The sessions in the directory (any slot).
    package var count: Int { entries.count }
    /// Creations admitted and not yet inserted or abandoned.
    package var creationsUnderWay: Int { creating }
    /// The places under `maxSessions` taken: the sessions here, the creations and the ends
    /// under way.
    package var placesTaken: Int { entries.count + creating + ending }
    /// How many sessions are active and how many passivated (being passivated or reactivated
    /// counts as passivated).
    package var counts: (active: Int, passivated: Int) { (entries.counts.active, entries.counts.passivated) }
    /// The session `id`'s entry.
    package func entry(_ id: SessionID) -> Entry? { entries[id] }
    /// Every session, by id.
    package func listed<T>(_ transform: (SessionID, Entry) -> T) -> [T] { entries.map(transform) }
    /// The lease book (spread mode).
    package var leaseBook: SessionLeaseBook? { leases }

    // MARK: - Creation

    /// Admits one creation at `now` (counted against `maxSessions` until `creationStarted` or
    /// `creationAbandoned`), or throws why not: the directory stops, is full, or creates too fast.
    package mutating func admitCreation(now: ContinuousClock.Instant) throws(SessionError) {
        guard !stopped else { throw .unavailable("the coordinator is stopping") }
        guard placesTaken < settings.maxSessions else { throw .tooManySessions(limit: settings.maxSessions) }
        guard creations.take(now: now) else { throw .creationRateExceeded(perSecond: settings.maxCreationsPerSecond) }
        creating += 1
    }

    /// An admitted creation ended before its host ran (its lease or its start failed).
    package mutating func creationAbandoned() {
        creating -= 1
    }

    /// An admitted creation's host runs (spread: under the lease taken with `leaseToken`): it is
    /// inserted, held by its creator, unless the directory stopped or the lease was lost meanwhile.
    package mutating func creationStarted(
        _ id: SessionID, root: String, host: Host, leaseToken: FencingToken?, now: ContinuousClock.Instant
    ) -> CreationStep {
        creating -= 1
        if stopped { return .stopping }
        if let leases, leaseToken == nil || leases.token(of: id) != leaseToken { return .leaseLost }
        entries[id] = Entry(root: root, slot: .active(RunningSession(host: host, clients: 1, lastUsed: now)))
        return .inserted
    }

    /// A created session could not be recorded in the store: removed and returned (to stop, and
    /// give its lease up), unless something removed it first.
    package mutating func creationNotRecorded(_ id: SessionID) -> Entry? {
        entries.removeValue(forKey: id)
    }

    // MARK: - Use

    /// What a use of `id` does next at `now`; `claimed`: a takeover was just tried (not asked
    /// again). A passivated session's reactivation is begun with `reactivation` (given its root,
    /// where it is kept, and spread its lease's token).
    package mutating func use(
        _ id: SessionID, now: ContinuousClock.Instant, claimed: Bool = false,
        reactivation: (String, PassivatedSession, FencingToken?) -> Reactivation
    ) -> UseStep {
        guard !stopped else { return .stopping }
        if entries[id] == nil, leases != nil {
            if releasing.contains(id) { return .awaitRelease }
            if !claimed { return .claim }
        }
        guard let entry = entries[id] else { return .unknown }
        switch entry.slot {
        case .active(var running):
            running.clients += 1
            running.lastUsed = now
            entries[id]?.slot = .active(running)
            return .use(running.host)
        case .passivating(_, let passivation):
            return .awaitPassivation(passivation)
        case .reactivating(_, let reactivating):
            return .awaitReactivation(reactivating)
        case .passivated(let passivated):
            let started = reactivation(entry.root, passivated, leases?.token(of: id))
            entries[id]?.slot = .reactivating(passivated, started)
            return .awaitReactivation(started)
        }
    }

    /// A client let go of `id` at `now`: once none holds it, it may passivate when idle.
    package mutating func release(_ id: SessionID, now: ContinuousClock.Instant) {
        guard case .active(var running) = entries[id]?.slot else { return }
        running.clients -= 1
        running.lastUsed = now
        entries[id]?.slot = .active(running)
        if running.clients == 0 { idle.becameIdle(id, since: now) }
    }

    /// A reactivation of `id` ended with `outcome` at `now`: the session runs (its root returned),
    /// or it is passivated as before and the failure thrown (forgotten if the store no longer
    /// holds it). `nil`: something else settled it first (an end, a stop, a lost lease, which
    /// stop what it started); a failure is thrown all the same.
    package mutating func settleReactivation(
        _ id: SessionID, _ reactivation: Reactivation, _ outcome: Result<Host, SessionError>, now: ContinuousClock.Instant
    ) throws(SessionError) -> String? {
        guard let entry = entries[id], case .reactivating(let passivated, let current) = entry.slot, current == reactivation else {
            if case .failure(let error) = outcome { throw error }
            return nil
        }
        switch outcome {
        case .success(let host):
            entries[id]?.slot = .active(RunningSession(host: host, clients: 0, lastUsed: now))
            idle.becameIdle(id, since: now)
            return entry.root
        case .failure(.unknownSession(let text)):
            // The store no longer holds it (ended through another coordinator): gone here too.
            entries.removeValue(forKey: id)
            throw .unknownSession(text)
        case .failure(let error):
            entries[id]?.slot = .passivated(passivated)
            throw error
        }
    }

    // MARK: - Passivation

    /// Begins passivating every session no client used for the idle timeout at `now`, each with
    /// `passivation` (given its host); returns them.
    package mutating func beginIdlePassivations(
        now: ContinuousClock.Instant, _ passivation: (SessionID, Host) -> Passivation
    ) -> [(SessionID, Passivation)] {
        var begun: [(SessionID, Passivation)] = []
        // Only the sessions that became idle long enough ago: an entry whose session was used
        // since (and queued again) or is gone is stale.
        for (id, since) in idle.takeDue(now: now, timeout: settings.idleTimeout) {
            guard case .active(let running) = entries[id]?.slot, running.clients == 0, running.lastUsed == since else { continue }
            let started = passivation(id, running.host)
            entries[id]?.slot = .passivating(running, started)
            begun.append((id, started))
        }
        return begun
    }

    /// A passivation of `id` ended with `outcome` at `now` (`nil`: the snapshot did not encode).
    /// Spread, a passivated session is no coordinator's: it is forgotten, and its lease is given
    /// up next (`giveUpLease`).
    package mutating func settlePassivation(
        _ id: SessionID, _ passivation: Passivation, _ outcome: PassivatedSession?, now: ContinuousClock.Instant
    ) -> PassivationEnd {
        guard case .passivating(var running, let current) = entries[id]?.slot, current == passivation else { return .stale }
        guard let outcome else {
            running.lastUsed = now
            entries[id]?.slot = .active(running)
            if running.clients == 0 { idle.becameIdle(id, since: now) }
            return .keptRunning
        }
        if leases != nil { entries.removeValue(forKey: id) } else { entries[id]?.slot = .passivated(outcome) }
        return .passivated
    }

    // MARK: - End and stop

    /// Ends `id` (its place stays taken until `ended` or `endFailed`): removed, with the token its removal from the store carries (spread: its
    /// lease's; `nil`: the coordinator's); `nil` if there is no such session here.
    package mutating func end(_ id: SessionID) -> (entry: Entry, leaseToken: FencingToken?)? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        ending += 1
        return (entry, leases?.token(of: id))
    }

    /// Whether an end of `id` must take it over from the store first (spread, not here).
    package func endNeedsClaim(_ id: SessionID) -> Bool {
        entries[id] == nil && leases != nil
    }

    /// Whether `id`'s lease is being given up: a takeover of it waits for that first.
    package func isReleasing(_ id: SessionID) -> Bool {
        releasing.contains(id)
    }

    /// The store did not remove an ended session: it is kept, passivated, unless it came back
    /// meanwhile or the directory stopped. Spread, it is forgotten instead, as a passivated
    /// session is, and `true` says to give its lease up (kept here, passivated, it would hold a
    /// place under `maxSessions` and its lease until the term ends, with no client to ask for it).
    package mutating func endFailed(_ id: SessionID, root: String, sequence: UInt64) -> Bool {
        ending -= 1
        if leases != nil { return true }
        guard entries[id] == nil, !stopped else { return false }
        entries[id] = Entry(root: root, slot: .passivated(PassivatedSession(kept: .store, sequence: sequence)))
        return false
    }

    /// An ended session is gone from the store: its lease is forgotten.
    package mutating func ended(_ id: SessionID) {
        ending -= 1
        leases?.remove(id)
    }

    /// The directory stops: nothing is created or taken over from now on. Returns every session with its id
    /// (to stop, in the order of their ids) and the lease term to end in the store (spread).
    package mutating func stopAll() -> (slots: [(id: SessionID, slot: Slot)], term: SessionLeaseTerm?) {
        stopped = true
        let slots = entries.removeAll().sorted { $0.0.text < $1.0.text }.map { (id: $0.0, slot: $0.1.slot) }
        let term = leases?.term
        _ = leases?.endTerm()
        return (slots, term)
    }

    // MARK: - Spread: leases and takeover

    /// The live term at `now`, if any (spread).
    package func liveTerm(now: ContinuousClock.Instant) -> SessionLeaseTerm? { leases?.liveTerm(now: now) }
    /// The term the leases are held under (spread).
    package var leaseTerm: SessionLeaseTerm? { leases?.term }
    /// How many leases are held (spread).
    package var leasesHeld: Int { leases?.held.count ?? 0 }
    /// The token of `id`'s lease, if held.
    package func leaseToken(of id: SessionID) -> FencingToken? { leases?.token(of: id) }

    /// The term lapsed by `now` unrenewed: every session held under it is removed and returned,
    /// to stop.
    package mutating func expire(now: ContinuousClock.Instant) -> [Slot] {
        drop(leases?.expired(now: now) ?? [])
    }

    /// `term` began by a request sent at `askedAt`: the sessions of the term it replaces are
    /// removed and returned, to stop.
    package mutating func termBegan(_ term: SessionLeaseTerm, askedAt: ContinuousClock.Instant) -> [Slot] {
        drop(leases?.began(term, askedAt: askedAt) ?? [])
    }

    /// A renewal of `term` sent at `askedAt` succeeded.
    package mutating func termRenewed(_ term: SessionLeaseTerm, askedAt: ContinuousClock.Instant) {
        leases?.renewed(term, askedAt: askedAt)
    }

    /// The store answered that `term` ended: its sessions are removed and returned, to stop.
    package mutating func termEnded(_ term: SessionLeaseTerm) -> [Slot] {
        drop(leases?.ended(term) ?? [])
    }

    /// `id`'s lease was taken with `token` under `term`; `false` if `term` is no longer held.
    package mutating func leaseAcquired(_ id: SessionID, token: FencingToken, under term: SessionLeaseTerm) -> Bool {
        leases?.acquired(id, token: token, under: term) ?? false
    }

    /// Forgets `id`'s lease, to give it up in the store, if held and its session is not here
    /// (passivated, never inserted, refused); returns its token. Until `leaseGivenUp`, a use
    /// of `id` waits (`UseStep.awaitRelease`).
    /// A lease a takeover under way may take again is kept (a release applied after the store
    /// took it again for this term, with the same token, would leave the takeover serving a
    /// session whose lease is given up).
    package mutating func giveUpLease(of id: SessionID) -> FencingToken? {
        guard entries[id] == nil, claiming[id] == nil, let token = leases?.remove(id) else { return nil }
        releasing.insert(id)
        return token
    }

    /// A takeover of `id` begins (its lease is asked for next).
    package mutating func claimBegan(_ id: SessionID) {
        claiming[id, default: 0] += 1
    }

    /// A takeover of `id` ended, taken or not.
    package mutating func claimEnded(_ id: SessionID) {
        if let count = claiming[id], count > 1 { claiming[id] = count - 1 } else { claiming[id] = nil }
    }

    /// The store answered the release of `id`'s lease (or failed to: the lease then runs out).
    package mutating func leaseGivenUp(_ id: SessionID) {
        releasing.remove(id)
    }

    /// A takeover of `id` took its lease with `token` and read its checkpoint (`root`: `nil` if
    /// the store holds none, `sequence`: its rendering's number): it is inserted, passivated,
    /// unless the directory stopped, is full, or the lease was lost meanwhile.
    package mutating func claimed(_ id: SessionID, token: FencingToken, root: String?, sequence: UInt64) -> ClaimStep {
        // Claimed meanwhile by another request of this coordinator (with the same token).
        guard entries[id] == nil else { return .alreadyHere }
        // Ended through another coordinator between the lease and the read.
        guard let root else { return .refused(.unknownSession(id.text), givesUpLease: true) }
        // `stopAll()` ran while the store answered: it did not see this session.
        guard !stopped else { return .refused(.unavailable("the coordinator is stopping"), givesUpLease: true) }
        // Creations and ends under way count: each of them checked the limit before this one.
        guard placesTaken < settings.maxSessions else {
            return .refused(.tooManySessions(limit: settings.maxSessions), givesUpLease: true)
        }
        // The term it was taken under ended while the checkpoint was read: another may own it.
        guard leases?.token(of: id) == token else {
            return .refused(.unavailable("this session's lease was lost while it was taken; try again"), givesUpLease: false)
        }
        entries[id] = Entry(root: root, slot: .passivated(PassivatedSession(kept: .store, sequence: sequence)))
        return .taken
    }

    /// Removes the sessions whose leases were lost; returns their slots, to stop.
    private mutating func drop(_ lost: [SessionID]) -> [Slot] {
        lost.compactMap { entries.removeValue(forKey: $0)?.slot }
    }
}

extension SessionLifecycle {
    /// The sessions by id, with how many are active and passivated kept as their slots change
    /// (`SessionCounts`), so the gauges never count them all.
    private struct Table: Sendable {
        private var storage: [SessionID: Entry] = [:]
        private(set) var counts = SessionCounts()

        var count: Int { storage.count }

        subscript(id: SessionID) -> Entry? {
            get { storage[id] }
            set {
                counts.changed(from: storage[id]?.slot.isActive, to: newValue?.slot.isActive)
                storage[id] = newValue
            }
        }

        @discardableResult
        mutating func removeValue(forKey id: SessionID) -> Entry? {
            let removed = storage.removeValue(forKey: id)
            counts.changed(from: removed?.slot.isActive, to: nil)
            return removed
        }

        /// Removes every session and returns them.
        mutating func removeAll() -> [(SessionID, Entry)] {
            defer {
                storage = [:]
                counts = SessionCounts()
            }
            return storage.map { ($0.key, $0.value) }
        }

        func map<T>(_ transform: (SessionID, Entry) -> T) -> [T] { storage.map { transform($0.key, $0.value) } }
    }
}
