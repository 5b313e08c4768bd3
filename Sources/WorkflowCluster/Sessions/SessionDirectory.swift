import Foundation
import Logging
import Metrics
import Workflow
import WorkflowRemote

/// The sessions a coordinator hosts: a live tree per client, beside the shared root.
///
/// A client creates a session of a registered root (`create(root:props:)`) and reaches it by its
/// unguessable id for as long as it lives. Every session's host runs on the coordinator's
/// `RemoteRuntime` through its own `SessionLoop`, so its remote children are placed, run and
/// reported as children of their own, on whatever workers placement picks.
///
/// **Lifecycle.** A session is *active* (its tree in memory, its remote children running) while
/// a client uses it: a request, or an open rendering stream, holds it (`use(_:_:)`). One that no
/// client used for `SessionSettings.idleTimeout` is *passivated* (`passivateIdle()`): its host
/// stops (its remote children stop on their workers) and its tree is kept: in the store, when
/// the coordinator has one (its last checkpoint, committed as it stops; only its id, root name
/// and rendering number stay in memory), or else as its snapshot in memory. The next use
/// reactivates it from there, with the same state, its rendering numbers continuing. A session
/// is never passivated while a client holds it, and a request that arrives while it is being
/// passivated waits for it and reactivates it, so no event sent to a session is lost to
/// passivation. `end(_:)` stops one for good (and removes it from the store).
///
/// **Durability.** With a store, a session is durable as the shared root is: it is in the store
/// before its creation is answered, each accepted event is answered once a checkpoint of its
/// tree that applied it is committed (its own `CheckpointCommitter`, under its own
/// `CheckpointScope`; the store commits the checkpoints of all trees ready at once in one
/// transaction, `GroupCommit`), and a coordinator that starts on the store lists every session
/// it holds as passivated, to be reactivated from its checkpoint when a client asks for it.
///
/// **Spread over coordinators.** With `SessionSpread` (several coordinators sharing the
/// PostgreSQL store), each session is owned by one coordinator at a time, by a lease of its own
/// (`SessionLeaseStore`), held under the coordinator's one lease term: creating a session takes
/// its lease; a request for a session this coordinator does not hold takes its lease if it was
/// given up or its owner's term ended (the owner died or stopped) and reactivates it from the
/// store, or else is refused with the owner's gateway (`SessionError.ownedElsewhere`), which the
/// gateway answers with a redirect. The term is renewed by one statement three times per lease,
/// whatever the sessions held; when it ends or lapses unrenewed every session is stopped here,
/// and their late commits are refused by their tokens. A passivated session gives its lease up and is forgotten here: any coordinator
/// reactivates it at its next request. The store's sessions are not listed at start: they are
/// whoever's asks for them first.
///
/// **Limits.** At most `maxSessions` exist (active and passivated, those resumed from the store
/// included) and at most `maxCreationsPerSecond` are created per second: beyond, creation is
/// refused with a typed error (never queued).
package actor SessionDirectory {
    /// One session as the inspector lists it: never its id, which is what lets a client reach
    /// its tree, only a label an operator can match with its client's (the id's first 8 digits).
    package struct Summary: Sendable, Codable, Equatable {
        /// The first 8 hex digits of its id.
        package var label: String
        /// The root it hosts.
        package var root: String
        /// `active`, `passivating`, `passivated` or `reactivating`.
        package var state: String
        /// Clients holding it now (requests in progress and open streams).
        package var clients: Int
        /// The sequence number of its latest rendering.
        package var sequence: UInt64
    }

    /// A session in memory.
    struct Active: Sendable {
        var session: any ClusterRootSession
        /// Its group commit to the store (`nil`: the coordinator has none).
        var committer: CheckpointCommitter?
        /// Its client's props, to rebuild it after a passivation in memory (`nil` with a store,
        /// which keeps them).
        var props: Data?
        var clients = 0
        var lastUsed: ContinuousClock.Instant
    }

    /// Where a passivated session's tree is.
    enum Kept: Sendable {
        /// In memory (no store): its snapshot and its client's props.
        case memory(snapshot: Data, props: Data?)
        /// In the store, under the session's scope: nothing of it in memory.
        case store
    }

    /// A session kept out of memory's running trees.
    struct Passivated: Sendable {
        var kept: Kept
        /// The sequence number of its latest rendering.
        var sequence: UInt64
    }

    /// The running cases are boxed (`indirect`), so a passivated session's entry holds only
    /// what `Passivated` needs.
    enum Slot: Sendable {
        indirect case active(Active)
        /// Being passivated: a use waits for it, then reactivates it. The task's `nil` means
        /// the snapshot could not be encoded: the session was kept running instead.
        indirect case passivating(Active, Task<Passivated?, Never>)
        case passivated(Passivated)
        /// Being reactivated (its tree read and its host started): a use waits for it.
        indirect case reactivating(Passivated, Task<Result<Active, SessionError>, Never>)
    }

    struct Entry {
        let root: String
        var slot: Slot

        var isActive: Bool {
            if case .active = slot { return true }
            return false
        }
    }

    /// The coordinator's store and its fencing token, which every session's commits carry.
    struct Durability: Sendable {
        var store: any CoordinatorStore
        var token: FencingToken
    }

    private let registry: RootWorkflowRegistry
    private let runtime: RemoteRuntime
    /// The limits and the idle timeout.
    package let settings: SessionSettings
    let logger: Logger
    private let observers: @Sendable (String) -> [any WorkflowObserver]
    let clock = ContinuousClock()
    let durability: Durability?
    var entries = SessionTable()
    /// The sessions whose last client let go, for the idle passivation (`passivateIdle()`).
    var idle = IdleSessionQueue()
    private var creations: CreationBudget
    /// Sessions whose creation is under way (counted against `maxSessions`).
    var creating = 0
    var stopped = false
    let metrics: SessionMetrics
    /// Spread mode: the session leases and this process's name in them (`nil`: not spread).
    let spread: SessionSpread?
    /// The session leases held and the term they are held under (spread mode).
    var leases: SessionLeaseBook
    /// The request beginning a new lease term, while one is under way.
    var termBeginning: Task<Result<(SessionLeaseTerm, ContinuousClock.Instant), CoordinatorStoreError>, Never>?

    /// A directory starting sessions of `registry`'s roots on `runtime`.
    ///
    /// - Parameters:
    ///   - store: the coordinator's store (`nil`: none, and sessions live in memory only): every
    ///     session is committed to it, and the sessions it holds are listed at once, passivated.
    ///   - spread: sessions shared with other coordinators through its store (`store` is then
    ///     not needed; the store's sessions are not listed: each is taken when a client asks).
    ///   - observers: the hooks each session's host reports to, by root name (the
    ///     coordinator's metrics observer).
    package init(
        registry: RootWorkflowRegistry, runtime: RemoteRuntime, settings: SessionSettings, logger: Logger,
        store: OpenedCoordinatorStore? = nil, spread: SessionSpread? = nil, metricsFactory: (any MetricsFactory)? = nil,
        observers: @escaping @Sendable (String) -> [any WorkflowObserver] = { _ in [] }
    ) {
        self.spread = spread
        self.leases = SessionLeaseBook(lease: spread?.settings.lease ?? .seconds(1))
        self.registry = registry
        self.runtime = runtime
        self.settings = settings
        self.logger = logger
        self.observers = observers
        // Spread, every session's commits carry its own lease's token, never the writer's.
        self.durability = store.map { Durability(store: $0.store, token: $0.token) } ?? spread.map { Durability(store: $0.store, token: FencingToken(rawValue: 0)) }
        self.creations = CreationBudget(perSecond: settings.maxCreationsPerSecond, now: ContinuousClock().now)
        let metrics = SessionMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.metrics = metrics
        var entries = SessionTable()
        for stored in spread == nil ? store?.sessions ?? [] : [] {
            entries[stored.id] = Entry(root: stored.root, slot: .passivated(Passivated(kept: .store, sequence: stored.renderingSequence)))
        }
        self.entries = entries
        metrics.active.record(0)
        metrics.passivatedNow.record(entries.count)
        if entries.count > 0 {
            logger.notice("resuming the store's sessions, passivated until a client asks for one", metadata: ["sessions": "\(entries.count)"])
        }
    }

    /// Creates a session of the root `root` from its client's `props` (JSON; `nil`: none) and
    /// returns its id; its first rendering is ready when this returns, and with a store the
    /// session is in it.
    package func create(root: String, props: Data?) async throws(SessionError) -> SessionID {
        guard !stopped else { throw .unavailable("the coordinator is stopping") }
        // Creations under way count: the actor runs others while this one awaits its start.
        guard entries.count + creating < settings.maxSessions else { throw .tooManySessions(limit: settings.maxSessions) }
        guard creations.take(now: clock.now) else { throw .creationRateExceeded(perSecond: settings.maxCreationsPerSecond) }
        creating += 1
        defer { creating -= 1 }
        let id = SessionID.random()
        var token = durability?.token
        if spread != nil {
            let attempt: SessionLeaseAttempt
            do {
                attempt = try await takeLease(of: id, creating: true)
            } catch {
                logger.error("session not created: its lease could not be taken: \(error)", metadata: ["root": "\(root)"])
                throw .unavailable("the session could not be recorded in the store (\(error)); try again later")
            }
            guard case .acquired(let leased) = attempt else { throw .unavailable("a fresh session id was taken; try again") }
            token = leased
        }
        let committer = committer(for: id, token: token, origin: SessionOrigin(root: root, props: props), restored: nil)
        let session: any ClusterRootSession
        do {
            session = try await start(id, root: root, props: props, snapshot: nil, sequence: 0, durability: committer)
        } catch {
            await releaseLease(of: id)
            throw error
        }
        // The coordinator began stopping while the session started: `stopAll()` did not see it.
        guard !stopped else {
            await session.stop()
            await releaseLease(of: id)
            throw .unavailable("the coordinator is stopping")
        }
        // Held until it is in the store: never passivated before.
        let active = Active(session: session, committer: committer, props: durability == nil ? props : nil, clients: 1, lastUsed: clock.now)
        entries[id] = Entry(root: root, slot: .active(active))
        updateGauges()
        if let committer {
            do {
                try await committer.awaitDurable(events: 0)
            } catch {
                logger.error("session not created: it could not be recorded in the store: \(error)", metadata: ["root": "\(root)"])
                if entries.removeValue(forKey: id) != nil {
                    updateGauges()
                    await session.stop()
                    await releaseLease(of: id)
                }
                throw .unavailable("the session could not be recorded in the store (\(error)); try again later")
            }
        }
        release(id)
        metrics.created.increment()
        logger.info("session created", metadata: ["session": "\(id)", "root": "\(root)"])
        return id
    }

    /// Runs `body` with the session `id`, reactivating it first if it was passivated; the
    /// session counts as used (never passivated) until `body` returns.
    package func use<Result: Sendable>(
        _ id: SessionID, _ body: @Sendable (any ClusterRootSession) async -> Result
    ) async throws(SessionError) -> Result {
        let session = try await acquire(id)
        let result = await body(session)
        release(id)
        return result
    }

    /// Ends the session `id`: its host stops (its remote children stop on their workers), it is
    /// removed from the store, and its id is unknown from then on. If the store cannot remove
    /// it, it is kept (passivated) and this throws `.unavailable`: ending it can be tried again.
    package func end(_ id: SessionID) async throws(SessionError) {
        if entries[id] == nil, spread != nil { try await claim(id) }
        guard let entry = entries.removeValue(forKey: id) else { throw .unknownSession(id.text) }
        let token = spread == nil ? durability?.token : leases.token(of: id)
        updateGauges()
        let sequence = await Self.stop(entry.slot)
        if let durability {
            do {
                // After the stop: its last commit is in, and none follows.
                try await durability.store.remove(.session(id), fencedBy: token ?? durability.token)
            } catch {
                logger.error("session not ended: the store did not remove it: \(error)", metadata: ["session": "\(id)"])
                if entries[id] == nil && !stopped {
                    entries[id] = Entry(root: entry.root, slot: .passivated(Passivated(kept: .store, sequence: sequence)))
                    updateGauges()
                }
                throw .unavailable("the session could not be removed from the store (\(error)); it is kept: try again later")
            }
        }
        leases.remove(id)
        metrics.ended.increment()
        logger.info("session ended", metadata: ["session": "\(id)", "root": "\(entry.root)"])
    }

    /// Every session, for the inspector and `GET /api/sessions`.
    package func summaries() -> [Summary] {
        entries.map { id, entry in
            let label = String(id.text.prefix(8))
            return switch entry.slot {
            case .active(let active):
                Summary(label: label, root: entry.root, state: "active", clients: active.clients, sequence: active.session.latestRendering.sequence)
            case .passivating(let active, _):
                Summary(label: label, root: entry.root, state: "passivating", clients: 0, sequence: active.session.latestRendering.sequence)
            case .passivated(let passivated):
                Summary(label: label, root: entry.root, state: "passivated", clients: 0, sequence: passivated.sequence)
            case .reactivating(let passivated, _):
                Summary(label: label, root: entry.root, state: "reactivating", clients: 0, sequence: passivated.sequence)
            }
        }.sorted { $0.label < $1.label }
    }

    /// How many sessions are active and how many passivated (those being passivated or
    /// reactivated count as passivated).
    package var counts: (active: Int, passivated: Int) {
        (entries.counts.active, entries.counts.passivated)
    }

    /// Stops every active session (the coordinator is stopping; with a store each commits its
    /// last checkpoint, and every session stays in the store); nothing can be created after.
    package func stopAll() async {
        stopped = true
        let slots = entries.removeAll().map(\.slot)
        updateGauges()
        for slot in slots { _ = await Self.stop(slot) }
        // Given up at once, all by one statement: the other coordinators take them at their
        // next request.
        guard let spread, let term = leases.term else { return }
        _ = leases.endTerm()
        do {
            try await spread.store.endSessionLeaseTerm(term)
        } catch {
            logger.warning("the session lease term was not ended (its sessions' leases run out instead): \(error)", metadata: ["term": "\(term.number)"])
        }
    }


    // MARK: - Private

    private func acquire(_ id: SessionID) async throws(SessionError) -> any ClusterRootSession {
        while true {
            if entries[id] == nil, spread != nil, !stopped { try await claim(id) }
            guard let entry = entries[id], !stopped else { throw .unknownSession(id.text) }
            switch entry.slot {
            case .active(var active):
                active.clients += 1
                active.lastUsed = clock.now
                entries[id]?.slot = .active(active)
                return active.session
            case .passivating(_, let task):
                // Whoever resumes first settles it; the others find it settled.
                settlePassivation(id, task, await task.value)
            case .reactivating(_, let task):
                try settleReactivation(id, task, await task.value)
            case .passivated(let passivated):
                let token = spread == nil ? durability?.token : leases.token(of: id)
                let task = Task { await reactivate(id, root: entry.root, passivated, token: token) }
                entries[id]?.slot = .reactivating(passivated, task)
                try settleReactivation(id, task, await task.value)
            }
        }
    }

    private func release(_ id: SessionID) {
        guard case .active(var active) = entries[id]?.slot else { return }
        active.clients -= 1
        active.lastUsed = clock.now
        entries[id]?.slot = .active(active)
        if active.clients == 0 { idle.becameIdle(id, since: active.lastUsed) }
    }

    /// Stops whatever runs of a removed entry's session (a passivation or a reactivation under
    /// way is awaited first); returns the sequence number of its latest rendering.
    static func stop(_ slot: Slot) async -> UInt64 {
        switch slot {
        case .active(let active):
            await active.session.stop()
            return active.session.latestRendering.sequence
        case .passivating(let active, let task):
            if let passivated = await task.value { return passivated.sequence }
            await active.session.stop()
            return active.session.latestRendering.sequence
        case .passivated(let passivated):
            return passivated.sequence
        case .reactivating(let passivated, let task):
            guard case .success(let active) = await task.value else { return passivated.sequence }
            await active.session.stop()
            return active.session.latestRendering.sequence
        }
    }

    /// A committer of the session `id`'s checkpoints with `token` (the coordinator's, or spread
    /// the session's lease's), when the coordinator has a store.
    nonisolated func committer(
        for id: SessionID, token: FencingToken?, origin: SessionOrigin, restored: CoordinatorCheckpoint?
    ) -> CheckpointCommitter? {
        durability.map {
            CheckpointCommitter(
                store: $0.store, token: token ?? $0.token, scope: .session(id), origin: origin, restored: restored, logger: logger,
                tracer: runtime.tracer)
        }
    }

    /// Starts the session `id`'s host on the runtime's loop (`RuntimeLoop.run(_:)`): no
    /// thread waits for it, and the actor serves other requests meanwhile.
    nonisolated func start(
        _ id: SessionID, root: String, props: Data?, snapshot: TreeSnapshot?, sequence: UInt64, durability: CheckpointCommitter?
    ) async throws(SessionError) -> any ClusterRootSession {
        var start = RootStart(runtime: runtime, snapshot: snapshot, logger: logger, observers: observers(root))
        start.props = props
        start.loop = SessionLoop(runtime: runtime, scope: id.text)
        start.renderingSequence = sequence
        start.tokenMark = TreeMark.of(session: id.text)
        start.durability = durability
        let (registry, rootStart) = (registry, start)
        let started = await runtime.run { () -> Result<any ClusterRootSession, SessionError> in
            do throws(SessionError) {
                return .success(try registry.startSession(named: root, rootStart))
            } catch {
                return .failure(error)
            }
        }
        let session = try started.get()
        // Its first pass may still wait for its remote children (the loop serves other sessions
        // meanwhile): no client sees the session before its first settled rendering.
        for await _ in session.renderings() { break }
        return session
    }

    func updateGauges() {
        let (active, passivated) = counts
        metrics.active.record(active)
        metrics.passivatedNow.record(passivated)
    }
}

extension SessionDirectory {
    /// The directory's sessions by id, with how many are active and passivated kept as their
    /// slots change (`SessionCounts`), so the gauges never count them all.
    struct SessionTable: Sequence {
        private var storage: [SessionID: Entry] = [:]
        private(set) var counts = SessionCounts()

        var count: Int { storage.count }

        subscript(id: SessionID) -> Entry? {
            get { storage[id] }
            set {
                counts.changed(from: storage[id]?.isActive, to: newValue?.isActive)
                storage[id] = newValue
            }
        }

        @discardableResult
        mutating func removeValue(forKey id: SessionID) -> Entry? {
            let removed = storage.removeValue(forKey: id)
            counts.changed(from: removed?.isActive, to: nil)
            return removed
        }

        /// Removes every session and returns them.
        mutating func removeAll() -> [Entry] {
            defer {
                storage = [:]
                counts = SessionCounts()
            }
            return Array(storage.values)
        }

        func makeIterator() -> Dictionary<SessionID, Entry>.Iterator { storage.makeIterator() }
    }
}
