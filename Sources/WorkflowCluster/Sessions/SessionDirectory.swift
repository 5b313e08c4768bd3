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
/// whatever the sessions held, on the store's lease event loop (`SessionTermRenewer`); when it ends or lapses unrenewed every session is stopped here,
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

    /// What runs a session in memory: its tree's host and its commits.
    struct Hosted: Sendable {
        var session: any ClusterRootSession
        /// Its group commit to the store (`nil`: the coordinator has none).
        var committer: CheckpointCommitter?
        /// Its client's props, to rebuild it after a passivation in memory (`nil` with a store,
        /// which keeps them).
        var props: Data?
    }

    /// The lifecycle's decisions, with this actor's hosts and the tasks that passivate and
    /// reactivate.
    typealias Lifecycle = SessionLifecycle<Hosted, Task<PassivatedSession?, Never>, Task<Result<Hosted, SessionError>, Never>>

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
    /// Every decision about the sessions: this actor carries them out.
    var lifecycle: Lifecycle
    let metrics: SessionMetrics
    /// Spread mode: the session leases and this process's name in them (`nil`: not spread).
    let spread: SessionSpread?
    /// The releases of session leases under way (spread), which a takeover of the same session
    /// waits for.
    var releases: [SessionID: Task<Void, Never>] = [:]
    /// Renews the lease term on an event loop (spread mode): what it found is read into the
    /// lifecycle before each decision that depends on the term (`absorbRenewals()`).
    let renewer: SessionTermRenewer?
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
        self.registry = registry
        self.runtime = runtime
        self.settings = settings
        self.logger = logger
        self.observers = observers
        // Spread, every session's commits carry its own lease's token, never the writer's.
        self.durability = store.map { Durability(store: $0.store, token: $0.token) } ?? spread.map { Durability(store: $0.store, token: FencingToken(rawValue: 0)) }
        let metrics = SessionMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.metrics = metrics
        let resumed = (spread == nil ? store?.sessions ?? [] : []).map { (id: $0.id, root: $0.root, sequence: $0.renderingSequence) }
        self.lifecycle = Lifecycle(settings: settings, now: ContinuousClock().now, leaseDuration: spread?.settings.lease, resumed: resumed)
        self.renewer = spread.map { SessionTermRenewer(spread: $0, logger: logger) }
        metrics.active.record(0)
        metrics.passivatedNow.record(resumed.count)
        if !resumed.isEmpty {
            logger.notice("resuming the store's sessions, passivated until a client asks for one", metadata: ["sessions": "\(resumed.count)"])
        }
    }

    /// Creates a session of the root `root` from its client's `props` (JSON; `nil`: none) and
    /// returns its id; its first rendering is ready when this returns, and with a store the
    /// session is in it.
    package func create(root: String, props: Data?) async throws(SessionError) -> SessionID {
        // Counted against the limit from here to its insertion: the actor runs others meanwhile.
        try lifecycle.admitCreation(now: clock.now)
        let id = SessionID.random()
        var token = durability?.token
        if spread != nil {
            let attempt: SessionLeaseAttempt
            do {
                attempt = try await takeLease(of: id, creating: true)
            } catch {
                lifecycle.creationAbandoned()
                logger.error("session not created: its lease could not be taken: \(error)", metadata: ["root": "\(root)"])
                throw .unavailable("the session could not be recorded in the store (\(error)); try again later")
            }
            guard case .acquired(let leased) = attempt else {
                lifecycle.creationAbandoned()
                throw .unavailable("a fresh session id was taken; try again")
            }
            token = leased
        }
        let committer = committer(for: id, token: token, origin: SessionOrigin(root: root, props: props), restored: nil)
        let session: any ClusterRootSession
        do {
            session = try await start(id, root: root, props: props, snapshot: nil, sequence: 0, durability: committer)
        } catch {
            lifecycle.creationAbandoned()
            await releaseLease(of: id)
            throw error
        }
        // Held until it is in the store: never passivated before.
        let hosted = Hosted(session: session, committer: committer, props: durability == nil ? props : nil)
        switch lifecycle.creationStarted(id, root: root, host: hosted, leaseToken: spread == nil ? nil : token, now: clock.now) {
        case .inserted:
            break
        case .stopping:
            // The coordinator began stopping while the session started: `stopAll()` did not see it.
            await session.stop()
            await releaseLease(of: id)
            throw .unavailable("the coordinator is stopping")
        case .leaseLost:
            await session.stop()
            logger.warning("session not created: its lease was lost while it started", metadata: ["root": "\(root)"])
            throw .unavailable("the session's lease was lost while it started; try again")
        }
        updateGauges()
        if let committer {
            do {
                try await committer.awaitDurable(events: 0)
            } catch {
                logger.error("session not created: it could not be recorded in the store: \(error)", metadata: ["root": "\(root)"])
                if lifecycle.creationNotRecorded(id) != nil {
                    updateGauges()
                    await session.stop()
                    await releaseLease(of: id)
                }
                throw .unavailable("the session could not be recorded in the store (\(error)); try again later")
            }
        }
        lifecycle.release(id, now: clock.now)
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
        lifecycle.release(id, now: clock.now)
        return result
    }

    /// Ends the session `id`: its host stops (its remote children stop on their workers), it is
    /// removed from the store, and its id is unknown from then on. If the store cannot remove
    /// it, it is kept (passivated; spread, its lease given up, as a passivated session's) and this throws
    /// `.unavailable`: ending it can be tried again.
    package func end(_ id: SessionID) async throws(SessionError) {
        await awaitRelease(of: id)
        if lifecycle.endNeedsClaim(id) { try await claim(id) }
        guard let ended = lifecycle.end(id) else {
            throw lifecycle.isStopped ? .unavailable("the coordinator is stopping") : .unknownSession(id.text)
        }
        let (entry, leaseToken) = ended
        updateGauges()
        let sequence = await Self.stop(entry.slot)
        if let durability {
            do {
                // After the stop: its last commit is in, and none follows.
                try await durability.store.remove(.session(id), fencedBy: leaseToken ?? durability.token)
            } catch {
                logger.error("session not ended: the store did not remove it: \(error)", metadata: ["session": "\(id)"])
                if lifecycle.endFailed(id, root: entry.root, sequence: sequence) { await releaseLease(of: id) }
                updateGauges()
                throw .unavailable("the session could not be removed from the store (\(error)); it is kept: try again later")
            }
        }
        lifecycle.ended(id)
        metrics.ended.increment()
        logger.info("session ended", metadata: ["session": "\(id)", "root": "\(entry.root)"])
    }

    /// Every session, for the inspector and `GET /api/sessions`.
    package func summaries() -> [Summary] {
        lifecycle.listed { id, entry in
            let label = String(id.text.prefix(8))
            return switch entry.slot {
            case .active(let running):
                Summary(label: label, root: entry.root, state: "active", clients: running.clients, sequence: running.host.session.latestRendering.sequence)
            case .passivating(let running, _):
                Summary(label: label, root: entry.root, state: "passivating", clients: 0, sequence: running.host.session.latestRendering.sequence)
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
        lifecycle.counts
    }

    /// Ends every session at the coordinator's stop; nothing can be created after. With a store
    /// each commits its last checkpoint, and every session stays in the store.
    ///
    /// A session's tree is not torn down here: that costs about 0.1 ms of the runtime's loop a
    /// session, 14 s for 100,000, past any shutdown bound. Each session commits and ends its
    /// streams (`ClusterRootSession.stopAtExit()`), then one loop job stops every remote child
    /// on its worker (`RemoteRuntime.stopRemoteChildren(ofTrees:)`), before the lease term
    /// ends, so no other coordinator starts a session's child while this one's still runs. The
    /// hosts are returned, to be freed once the runtime has shut down (`RetiredSessions`).
    @discardableResult
    package func stopAll() async -> RetiredSessions {
        renewer?.stop()
        let (slots, term) = lifecycle.stopAll()
        updateGauges()
        let (retired, left) = await Self.inBatches(slots) { entry in await Self.stopAtExit(entry.slot).map { (entry.id, $0) } }
        if left > 0 {
            logger.warning(
                "the shutdown ran past its bound: sessions left as their last commits keep them", metadata: ["sessions": "\(left)"])
        }
        let ended = retired.compactMap { $0 }
        await runtime.stopRemoteChildren(ofTrees: ended.map { SessionLoop.pathPrefix(scope: $0.0.text) })
        // Given up at once, all by one statement: the other coordinators take them at their
        // next request.
        if let spread, let term {
            do {
                try await spread.store.endSessionLeaseTerm(term)
            } catch {
                logger.warning("the session lease term was not ended (its sessions' leases run out instead): \(error)", metadata: ["term": "\(term.number)"])
            }
        }
        return RetiredSessions(sessions: ended.map(\.1))
    }


    // MARK: - Private

    private func acquire(_ id: SessionID) async throws(SessionError) -> any ClusterRootSession {
        while true {
            var step = lifecycle.use(id, now: clock.now, reactivation: reactivation(of: id))
            if case .claim = step {
                try await claim(id)
                step = lifecycle.use(id, now: clock.now, claimed: true, reactivation: reactivation(of: id))
            }
            switch step {
            case .claim, .unknown:
                throw .unknownSession(id.text)
            case .stopping:
                throw .unavailable("the coordinator is stopping")
            case .awaitRelease:
                await awaitRelease(of: id)
            case .use(let hosted):
                return hosted.session
            case .awaitPassivation(let task):
                // Whoever resumes first settles it; the others find it settled.
                settlePassivation(id, task, await task.value)
            case .awaitReactivation(let task):
                try settleReactivation(id, task, await task.value)
            }
        }
    }

    /// What begins the reactivation of `id` when the lifecycle says so: a task reading its kept
    /// tree and starting its host.
    private func reactivation(of id: SessionID) -> (String, PassivatedSession, FencingToken?) -> Task<Result<Hosted, SessionError>, Never> {
        { [durability] root, passivated, leaseToken in
            let token = leaseToken ?? durability?.token
            return Task { await self.reactivate(id, root: root, passivated, token: token) }
        }
    }

    /// How many sessions `inBatches(_:_:)` works on at once.
    static let stoppingWidth = 256

    /// Stops `slots`' sessions (their leases lost, the process goes on): each tree is torn down.
    static func stop(_ slots: [Lifecycle.Slot]) async {
        _ = await inBatches(slots) { await stop($0) }
    }

    /// Runs `body` on each of `items`, `stoppingWidth` at a time, so that the sessions' last
    /// commits share transactions (`GroupCommit`) and none waits for the one before it.
    ///
    /// Once the calling task is cancelled (the shutdown ran past its bound), no further one
    /// begins; those under way finish. What is left loses nothing a client was told: every event
    /// answered 202 and every rendering shown is committed already, and the process is ending.
    /// Returns `body`'s results, in no particular order, and how many items were left.
    static func inBatches<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ body: @escaping @Sendable (Item) async -> Result
    ) async -> (results: [Result], left: Int) {
        await withTaskGroup(of: Result.self) { group in
            var next = items.makeIterator()
            var begun = 0
            var results: [Result] = []
            results.reserveCapacity(items.count)
            for _ in 0..<stoppingWidth {
                guard let item = next.next() else { break }
                begun += 1
                group.addTask { await body(item) }
            }
            while let result = await group.next() {
                results.append(result)
                guard !Task.isCancelled, let item = next.next() else { continue }
                begun += 1
                group.addTask { await body(item) }
            }
            return (results, items.count - begun)
        }
    }

    /// What of a removed entry's session runs once a passivation or a reactivation under way is
    /// over: its session, or the rendering number it was passivated at.
    enum Settled {
        case running(any ClusterRootSession)
        case passivated(sequence: UInt64)
    }

    /// Awaits a passivation or a reactivation under way of a removed entry's session.
    static func settled(_ slot: Lifecycle.Slot) async -> Settled {
        switch slot {
        case .active(let running):
            return .running(running.host.session)
        case .passivating(let running, let task):
            if let passivated = await task.value { return .passivated(sequence: passivated.sequence) }
            return .running(running.host.session)
        case .passivated(let passivated):
            return .passivated(sequence: passivated.sequence)
        case .reactivating(let passivated, let task):
            guard case .success(let hosted) = await task.value else { return .passivated(sequence: passivated.sequence) }
            return .running(hosted.session)
        }
    }

    /// Ends whatever runs of a session at the coordinator's exit, without tearing its tree down;
    /// returns its session, if one runs.
    static func stopAtExit(_ slot: Lifecycle.Slot) async -> (any ClusterRootSession)? {
        guard case .running(let session) = await settled(slot) else { return nil }
        await session.stopAtExit()
        return session
    }

    /// Stops whatever runs of a removed entry's session; returns the sequence number of its
    /// latest rendering.
    static func stop(_ slot: Lifecycle.Slot) async -> UInt64 {
        switch await settled(slot) {
        case .running(let session):
            await session.stop()
            return session.latestRendering.sequence
        case .passivated(let sequence):
            return sequence
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
