import WorkflowRemote

/// What a coordinator guarantees with its configuration, in the lines it logs first at start:
/// the store and how durable an answered event is, the lease, the transport's security, the
/// sessions and the gateway.
///
/// An operator who asked for durability and got none (a store path without its kind) would
/// otherwise learn it from lost events; these lines say it before anything is accepted.
package enum ClusterGuarantees {
    /// The lines, one per guarantee, in the order an operator checks them.
    package static func lines(for configuration: ClusterConfiguration) -> [String] {
        [store(configuration), lease(configuration), security(configuration), sessions(configuration), gateway(configuration)]
    }

    static func store(_ configuration: ClusterConfiguration) -> String {
        let store = configuration.store
        switch store.kind {
        case .none:
            let snapshots = configuration.snapshotFile.map {
                "; the root's snapshot is written to \($0) every \(configuration.snapshotInterval.milliseconds) ms"
            } ?? "; no snapshots either"
            return "store: none: an answered event is not durable, a coordinator crash loses what it accepted" + snapshots
        case .sqlite:
            let survives =
                store.sync == .full
                ? "survives a coordinator crash and a machine crash" : "survives a coordinator crash (SIGKILL included), not a machine crash"
            return "store: sqlite \(store.path ?? "") (sync \(store.sync.rawValue)): an answered event is committed first and \(survives)"
        case .postgres:
            let url = store.url.map(PostgresCoordinatorStore.withoutPassword) ?? ""
            // A malformed URL or security parameters stop the coordinator when it opens the store.
            let connection = store.url.flatMap(PostgresTransportSecurity.of(url:)).map { "; the connection \($0.guarantee)" } ?? ""
            return "store: postgres \(url): an answered event is committed in PostgreSQL first (as durable as its synchronous_commit)\(connection)"
        }
    }

    static func lease(_ configuration: ClusterConfiguration) -> String {
        if let spread = configuration.sessions?.spread {
            return "lease: none on the shared root (each coordinator hosts its own, in memory); each session under a lease of \(spread.lease.milliseconds) ms, taken over when its owner stops renewing it"
        }
        if let lease = configuration.store.lease {
            return "lease: \(lease.milliseconds) ms on the shared store: a standby until it holds the lease, exits 75 when it cannot renew it"
        }
        if configuration.store.kind == .none { return "lease: none (no store)" }
        return "lease: none: this coordinator takes the store as its only writer (a later one fences it out)"
    }

    static func security(_ configuration: ClusterConfiguration) -> String {
        switch configuration.securityMode {
        case .curve:
            return "security: curve on \(configuration.coordinatorEndpoint): encrypted, only workers whose keys are allow-listed join"
        case .plaintext:
            let guarded = configuration.coordinatorEndpoint.hasPrefix("tcp://") ? "anyone who reaches the port can join" : "the socket's permissions guard it"
            return "security: plaintext on \(configuration.coordinatorEndpoint): not encrypted, not authenticated (\(guarded))"
        }
    }

    static func sessions(_ configuration: ClusterConfiguration) -> String {
        guard let sessions = configuration.sessions else { return "sessions: off (the shared root only)" }
        let kept = configuration.store.kind == .none ? "kept in memory only" : "kept in the store"
        let spread = sessions.spread.map { ", spread over the coordinators sharing the store (advertised at \($0.advertisedURL))" } ?? ""
        return "sessions: on, at most \(sessions.maxSessions), \(Int(sessions.maxCreationsPerSecond)) created per second, passivated after \(sessions.idleTimeout.milliseconds) ms idle, \(kept)\(spread)"
    }

    static func gateway(_ configuration: ClusterConfiguration) -> String {
        guard let listen = configuration.gateway.listen else { return "gateway: off" }
        let access = configuration.gateway.bearerTokenFile == nil ? "no bearer token (loopback only)" : "a bearer token required"
        return "gateway: \(listen), \(access)"
    }
}
