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
/// client used for `SessionSettings.idleTimeout` is *passivated* (`passivateIdle()`): its tree
/// snapshot is taken, its host stops (its remote children stop on their workers), and only the
/// snapshot is kept. The next use reactivates it from that snapshot, with the same state, its
/// rendering numbers continuing. A session is never passivated while a client holds it, and a
/// request that arrives while it is being passivated waits for the snapshot and reactivates it,
/// so no event sent to a session is lost to passivation. `end(_:)` stops one for good.
///
/// **Limits.** At most `maxSessions` exist and at most `maxCreationsPerSecond` are created per
/// second: beyond, creation is refused with a typed error (never queued).
public actor SessionDirectory {
    /// One session as the inspector lists it: never its id, which is what lets a client reach
    /// its tree, only a label an operator can match with its client's (the id's first 8 digits).
    public struct Summary: Sendable, Codable, Equatable {
        /// The first 8 hex digits of its id.
        public var label: String
        /// The root it hosts.
        public var root: String
        /// `active` or `passivated`.
        public var state: String
        /// Clients holding it now (requests in progress and open streams).
        public var clients: Int
        /// The sequence number of its latest rendering.
        public var sequence: UInt64
    }

    /// A session in memory.
    private struct Active {
        var session: any ClusterRootSession
        var clients = 0
        var lastUsed: ContinuousClock.Instant
    }

    /// A session kept as its tree's snapshot.
    private struct Passivated: Sendable {
        var snapshot: Data
        var sequence: UInt64
    }

    private enum Slot {
        case active(Active)
        /// Being passivated: a use waits for the snapshot, then reactivates it. The task's `nil`
        /// means the snapshot could not be encoded: the session was kept running instead.
        case passivating(any ClusterRootSession, Task<Passivated?, Never>)
        case passivated(Passivated)
    }

    private struct Entry {
        let root: String
        let props: Data?
        var slot: Slot
    }

    private let registry: RootWorkflowRegistry
    private let runtime: RemoteRuntime
    /// The limits and the idle timeout.
    public let settings: SessionSettings
    private let logger: Logger
    private let observers: @Sendable (String) -> [any WorkflowObserver]
    private let clock = ContinuousClock()
    private var entries: [SessionID: Entry] = [:]
    private var creations: CreationBudget
    private var stopped = false
    private let metrics: SessionMetrics

    /// A directory starting sessions of `registry`'s roots on `runtime`.
    ///
    /// - Parameter observers: the hooks each session's host reports to, by root name (the
    ///   coordinator's metrics observer).
    public init(
        registry: RootWorkflowRegistry, runtime: RemoteRuntime, settings: SessionSettings, logger: Logger,
        metricsFactory: (any MetricsFactory)? = nil, observers: @escaping @Sendable (String) -> [any WorkflowObserver] = { _ in [] }
    ) {
        self.registry = registry
        self.runtime = runtime
        self.settings = settings
        self.logger = logger
        self.observers = observers
        self.creations = CreationBudget(perSecond: settings.maxCreationsPerSecond, now: ContinuousClock().now)
        self.metrics = SessionMetrics(factory: metricsFactory ?? MetricsSystem.factory)
    }

    /// Creates a session of the root `root` from its client's `props` (JSON; `nil`: none) and
    /// returns its id; its first rendering is ready when this returns.
    public func create(root: String, props: Data?) throws(SessionError) -> SessionID {
        guard !stopped else { throw .unavailable("the coordinator is stopping") }
        guard entries.count < settings.maxSessions else { throw .tooManySessions(limit: settings.maxSessions) }
        guard creations.take(now: clock.now) else { throw .creationRateExceeded(perSecond: settings.maxCreationsPerSecond) }
        let id = SessionID.random()
        let session = try start(id, root: root, props: props, snapshot: nil, sequence: 0)
        entries[id] = Entry(root: root, props: props, slot: .active(Active(session: session, lastUsed: clock.now)))
        metrics.created.increment()
        updateGauges()
        logger.info("session created", metadata: ["session": "\(id)", "root": "\(root)"])
        return id
    }

    /// Runs `body` with the session `id`, reactivating it first if it was passivated; the
    /// session counts as used (never passivated) until `body` returns.
    public func use<Result: Sendable>(
        _ id: SessionID, _ body: @Sendable (any ClusterRootSession) async -> Result
    ) async throws(SessionError) -> Result {
        let session = try await acquire(id)
        let result = await body(session)
        release(id)
        return result
    }

    /// Ends the session `id`: its host stops (its remote children stop on their workers) and its
    /// id is unknown from then on.
    public func end(_ id: SessionID) async throws(SessionError) {
        guard let entry = entries.removeValue(forKey: id) else { throw .unknownSession(id.text) }
        updateGauges()
        metrics.ended.increment()
        logger.info("session ended", metadata: ["session": "\(id)", "root": "\(entry.root)"])
        switch entry.slot {
        case .active(let active): await active.session.stop()
        case .passivating(let session, let task): if await task.value == nil { await session.stop() }
        case .passivated: break
        }
    }

    /// Passivates every session no client has used for the idle timeout; returns how many.
    @discardableResult
    public func passivateIdle() async -> Int {
        let now = clock.now
        var tasks: [(SessionID, Task<Passivated?, Never>)] = []
        for (id, entry) in entries {
            guard case .active(let active) = entry.slot, active.clients == 0, now - active.lastUsed >= settings.idleTimeout else { continue }
            let session = active.session
            let task = Task { () -> Passivated? in
                // No client holds it, and none can reach it until the snapshot is taken.
                let snapshot = await session.snapshot()
                // A tree whose snapshot does not encode is kept running: passivating it would
                // restart it from its initial state.
                guard let encoded = try? snapshot.encoded() else { return nil }
                let sequence = session.latestRendering.sequence
                await session.stop()
                return Passivated(snapshot: encoded, sequence: sequence)
            }
            entries[id]?.slot = .passivating(session, task)
            tasks.append((id, task))
        }
        var passivatedCount = 0
        for (id, task) in tasks {
            let outcome = await task.value
            settle(id, outcome)
            guard let passivated = outcome else {
                logger.error("session not passivated: its tree's snapshot does not encode; it keeps running", metadata: ["session": "\(id)"])
                continue
            }
            passivatedCount += 1
            metrics.passivated.increment()
            logger.info("session passivated", metadata: ["session": "\(id)", "snapshot-bytes": "\(passivated.snapshot.count)"])
        }
        if !tasks.isEmpty { updateGauges() }
        return passivatedCount
    }

    /// Passivates idle sessions every quarter of the idle timeout until the task is cancelled.
    public func run() async {
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

    /// Every session, for the inspector and `GET /api/sessions`.
    public func summaries() -> [Summary] {
        entries.map { id, entry in
            switch entry.slot {
            case .active(let active):
                Summary(label: String(id.text.prefix(8)), root: entry.root, state: "active", clients: active.clients, sequence: active.session.latestRendering.sequence)
            case .passivating:
                Summary(label: String(id.text.prefix(8)), root: entry.root, state: "passivating", clients: 0, sequence: 0)
            case .passivated(let passivated):
                Summary(label: String(id.text.prefix(8)), root: entry.root, state: "passivated", clients: 0, sequence: passivated.sequence)
            }
        }.sorted { $0.label < $1.label }
    }

    /// How many sessions are active and how many passivated.
    public var counts: (active: Int, passivated: Int) {
        var active = 0
        var passivated = 0
        for entry in entries.values {
            if case .active = entry.slot { active += 1 } else { passivated += 1 }
        }
        return (active, passivated)
    }

    /// Stops every active session (the coordinator is stopping); nothing can be created after.
    public func stopAll() async {
        stopped = true
        for (_, entry) in entries {
            switch entry.slot {
            case .active(let active): await active.session.stop()
            case .passivating(let session, let task): if await task.value == nil { await session.stop() }
            case .passivated: break
            }
        }
        entries = [:]
        updateGauges()
    }

    // MARK: - Private

    private func acquire(_ id: SessionID) async throws(SessionError) -> any ClusterRootSession {
        while true {
            guard let entry = entries[id], !stopped else { throw .unknownSession(id.text) }
            switch entry.slot {
            case .active(var active):
                active.clients += 1
                active.lastUsed = clock.now
                entries[id]?.slot = .active(active)
                return active.session
            case .passivating(_, let task):
                // Whoever resumes first settles it; the others find it settled.
                settle(id, await task.value)
            case .passivated(let passivated):
                let snapshot: TreeSnapshot
                do {
                    snapshot = try TreeSnapshot.decode(from: passivated.snapshot)
                } catch {
                    // Never a silent restart from the initial state: the kept tree stays kept.
                    logger.error("session not reactivated: its kept tree cannot be read: \(error)", metadata: ["session": "\(id)"])
                    throw .unavailable("this session's kept tree cannot be read; it is kept as it is")
                }
                let session = try start(id, root: entry.root, props: entry.props, snapshot: snapshot, sequence: passivated.sequence)
                entries[id]?.slot = .active(Active(session: session, clients: 1, lastUsed: clock.now))
                metrics.reactivated.increment()
                updateGauges()
                logger.info("session reactivated", metadata: ["session": "\(id)", "root": "\(entry.root)"])
                return session
            }
        }
    }

    /// Ends a passivation of `id` with its outcome, unless something else settled it first (a
    /// use reactivated it, an end removed it): passivated, or running again.
    private func settle(_ id: SessionID, _ outcome: Passivated?) {
        guard case .passivating(let session, _) = entries[id]?.slot else { return }
        if let outcome {
            entries[id]?.slot = .passivated(outcome)
        } else {
            entries[id]?.slot = .active(Active(session: session, lastUsed: clock.now))
        }
    }

    private func release(_ id: SessionID) {
        guard case .active(var active) = entries[id]?.slot else { return }
        active.clients -= 1
        active.lastUsed = clock.now
        entries[id]?.slot = .active(active)
    }

    private func start(_ id: SessionID, root: String, props: Data?, snapshot: TreeSnapshot?, sequence: UInt64) throws(SessionError)
        -> any ClusterRootSession
    {
        var start = RootStart(runtime: runtime, snapshot: snapshot, logger: logger, observers: observers(root))
        start.props = props
        start.loop = SessionLoop(runtime: runtime, scope: id.text)
        start.renderingSequence = sequence
        start.tokenMark = TreeMark.of(session: id.text)
        return try registry.startSession(named: root, start)
    }

    private func updateGauges() {
        let (active, passivated) = counts
        metrics.active.record(active)
        metrics.passivatedNow.record(passivated)
    }
}

/// How many sessions may still be created now: a token bucket refilled at the configured rate,
/// holding at most one second's worth.
struct CreationBudget {
    let perSecond: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(perSecond: Double, now: ContinuousClock.Instant) {
        self.perSecond = perSecond
        self.tokens = max(perSecond, 1)
        self.last = now
    }

    /// Takes one creation if the budget allows it at `now`.
    mutating func take(now: ContinuousClock.Instant) -> Bool {
        let (seconds, attoseconds) = (now - last).components
        tokens = min(max(perSecond, 1), tokens + (Double(seconds) + Double(attoseconds) / 1e18) * perSecond)
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// The directory's metrics: `workflow_sessions{state}` and the transitions' counters.
struct SessionMetrics: Sendable {
    let active: Gauge
    let passivatedNow: Gauge
    let created: Counter
    let passivated: Counter
    let reactivated: Counter
    let ended: Counter

    init(factory: any MetricsFactory) {
        active = Gauge(label: "workflow_sessions", dimensions: [("state", "active")], factory: factory)
        passivatedNow = Gauge(label: "workflow_sessions", dimensions: [("state", "passivated")], factory: factory)
        created = Counter(label: "workflow_sessions_created_total", factory: factory)
        passivated = Counter(label: "workflow_sessions_passivated_total", factory: factory)
        reactivated = Counter(label: "workflow_sessions_reactivated_total", factory: factory)
        ended = Counter(label: "workflow_sessions_ended_total", factory: factory)
    }
}
