/// A running session as `SessionLifecycle` keeps it: what runs it (`Host`: the directory's tree
/// and committer, or a simulation's stand-in) and the clients holding it now.
package struct RunningSession<Host: Sendable>: Sendable {
    /// What runs its tree.
    package var host: Host
    /// Clients holding it now (requests in progress and open streams): never passivated while
    /// one does.
    package var clients: Int
    /// When a client last took or let go of it.
    package var lastUsed: ContinuousClock.Instant

    /// A running session.
    package init(host: Host, clients: Int, lastUsed: ContinuousClock.Instant) {
        self.host = host
        self.clients = clients
        self.lastUsed = lastUsed
    }
}

/// Where one session is in its lifecycle: running, being passivated, passivated, or being
/// reactivated. A passivation or reactivation under way is named by what carries it out
/// (`Passivation`, `Reactivation`: the directory's tasks, a simulation's operation numbers), so
/// that whoever comes to it waits for that one, and only its own outcome settles it.
package enum SessionSlot<Host: Sendable, Passivation: Sendable & Equatable, Reactivation: Sendable & Equatable>: Sendable {
    /// Running: its tree in memory.
    indirect case active(RunningSession<Host>)
    /// Being passivated: a use waits for it, then reactivates it.
    indirect case passivating(RunningSession<Host>, Passivation)
    /// Its tree kept out of memory.
    case passivated(PassivatedSession)
    /// Being reactivated (its tree read and its host started): a use waits for it.
    indirect case reactivating(PassivatedSession, Reactivation)

    /// Whether its tree runs (the active gauge counts it).
    package var isActive: Bool {
        if case .active = self { return true }
        return false
    }
}
