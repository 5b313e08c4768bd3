import WorkflowCluster

/// A process that talks to the simulated store: its connection (a new number once it broke,
/// which fails what was in flight on the old one) and its life (a new number once it died,
/// which drops every answer meant for the old one).
protocol SimulatedNode: AnyObject {
    var connection: Int { get }
    var incarnation: Int { get }
}

/// The shared store as `SessionLeaseStore` and `LeasedCoordinatorStore` promise it, applied at
/// the database's instant of each request (`CoordinatorSimulation.call` adds the network): the
/// sessions' checkpoints and leases, the coordinators' lease terms, and the writer lease of the
/// leader and its standby. Every commit carries a fencing token and is refused unless it is the
/// current one; the writer of each accepted token is recorded, to check that there is one.
final class SimulatedSessionStore {
    /// A session's state: the events applied, in order, and its rendering's number.
    struct Checkpoint: Equatable {
        var root: String
        var events: [Int]
        var sequence: UInt64
    }

    private struct Row {
        var checkpoint: Checkpoint?
        var token: FencingToken
        var term: Int64
        var released: Bool
    }

    private struct Term {
        var holder: String
        var gateway: String
        var expiresAt: Duration
        var ended: Bool
    }

    /// The leader's lease on the shared root.
    struct WriterLease: Equatable {
        var holder: String
        var token: FencingToken
        var expiresAt: Duration
        var released: Bool
    }

    private var rows: [SessionID: Row] = [:]
    private var terms: [Int64: Term] = [:]
    private var lastTerm: Int64 = 0
    private var lastToken: Int64 = 0
    /// The writer of each accepted session token, and of each root token.
    private var writers: [FencingToken: String] = [:]
    private var rootWriters: [FencingToken: String] = [:]
    private var violation: String?
    private(set) var writer: WriterLease?

    /// The first broken rule seen by the store.
    func brokenInvariant() -> String? { violation }

    /// The session `id`'s latest checkpoint, if the store holds one.
    func checkpoint(of id: SessionID) -> Checkpoint? { rows[id]?.checkpoint }

    /// The token and whether it is live, of the lease on `id` (`nil`: no lease row).
    func lease(of id: SessionID, at now: Duration) -> (token: FencingToken, live: Bool)? {
        guard let row = rows[id] else { return nil }
        return (row.token, !row.released && isLive(row.term, at: now))
    }

    /// The lease of `id` in words, for a violation's message.
    func describeLease(of id: SessionID, at now: Duration) -> String {
        guard let row = rows[id] else { return "none" }
        let term = terms[row.term].map { "term \(row.term) of \($0.holder), \($0.ended ? "ended" : "expiring at \($0.expiresAt)")" } ?? "no term"
        return "token \(row.token), \(row.released ? "given up" : "held"), \(term), now \(now)"
    }

    private func isLive(_ number: Int64, at now: Duration) -> Bool {
        guard let term = terms[number] else { return false }
        return !term.ended && term.expiresAt > now
    }

    private func newToken() -> FencingToken {
        lastToken += 1
        return FencingToken(rawValue: lastToken)
    }

    // MARK: - SessionLeaseStore

    func beginTerm(holder: String, gateway: String, lease: Duration, at now: Duration) -> SessionLeaseTerm {
        for (number, term) in terms where term.holder == holder { terms[number]?.ended = true }
        lastTerm += 1
        terms[lastTerm] = Term(holder: holder, gateway: gateway, expiresAt: now + lease, ended: false)
        return SessionLeaseTerm(number: lastTerm, holder: holder)
    }

    func renewTerm(_ term: SessionLeaseTerm, lease: Duration, at now: Duration) -> Bool {
        guard isLive(term.number, at: now) else { return false }
        terms[term.number]?.expiresAt = now + lease
        return true
    }

    func endTerm(_ term: SessionLeaseTerm) {
        terms[term.number]?.ended = true
    }

    func acquire(_ id: SessionID, term: SessionLeaseTerm, creating: Bool, at now: Duration) -> SessionLeaseAttempt {
        guard isLive(term.number, at: now) else { return .termEnded }
        guard var row = rows[id] else {
            guard creating else { return .noSuchSession }
            let token = newToken()
            rows[id] = Row(checkpoint: nil, token: token, term: term.number, released: false)
            return .acquired(token)
        }
        if row.checkpoint == nil && !creating { return .noSuchSession }
        if row.term == term.number && !row.released { return .acquired(row.token) }
        if !row.released, isLive(row.term, at: now), let owner = terms[row.term] { return .heldBy(holder: owner.holder, gateway: owner.gateway) }
        row.token = newToken()
        row.term = term.number
        row.released = false
        rows[id] = row
        return .acquired(row.token)
    }

    func release(_ id: SessionID, token: FencingToken) {
        guard rows[id]?.token == token else { return }
        rows[id]?.released = true
    }

    /// Commits `checkpoint` of `id` with `token` for `writer`; `false`: fenced (or removed).
    func commit(_ id: SessionID, _ checkpoint: Checkpoint, token: FencingToken, writer: String) -> Bool {
        guard rows[id]?.token == token else { return false }
        if let other = writers[token], other != writer {
            violation = violation ?? "session token \(token) written by \(other) and by \(writer)"
        }
        writers[token] = writer
        rows[id]?.checkpoint = checkpoint
        return true
    }

    /// Removes `id` if `token` is its lease's; `false`: fenced.
    func remove(_ id: SessionID, token: FencingToken) -> Bool {
        guard rows[id]?.token == token else { return false }
        rows[id] = nil
        return true
    }

    // MARK: - LeasedCoordinatorStore (the shared root's writer)

    /// Takes the writer lease for `holder` if none is live: the new token, or the live lease.
    func acquireWriter(holder: String, lease: Duration, at now: Duration) -> (acquired: Bool, lease: WriterLease) {
        if let writer, !writer.released, writer.expiresAt > now { return (false, writer) }
        let taken = WriterLease(holder: holder, token: newToken(), expiresAt: now + lease, released: false)
        writer = taken
        return (true, taken)
    }

    /// Renews the writer lease of `token`; `false`: another took it (fenced).
    func renewWriter(token: FencingToken, lease: Duration, at now: Duration) -> Bool {
        guard writer?.token == token, writer?.released == false else { return false }
        writer?.expiresAt = now + lease
        return true
    }

    /// The connection holding the writer lease of `token` closed: a standby may take it at once.
    func writerConnectionClosed(token: FencingToken) {
        guard writer?.token == token else { return }
        writer?.released = true
    }

    /// A commit of the shared root by `holder` with `token`; `false`: fenced.
    func commitRoot(token: FencingToken, writer holder: String) -> Bool {
        guard writer?.token == token else { return false }
        if let other = rootWriters[token], other != holder {
            violation = violation ?? "root token \(token) written by \(other) and by \(holder)"
        }
        rootWriters[token] = holder
        return true
    }
}
