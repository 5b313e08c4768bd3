/// How a coordinator hosts sessions (`sessions` in the configuration file): one live tree per
/// client, beside the shared root.
package struct SessionSettings: Sendable, Equatable {
    /// A session no client used for this long is passivated: its tree is kept (in the store
    /// when the coordinator has one, else as a snapshot in memory), its remote children stop, its
    /// memory is freed, until its next request.
    package var idleTimeout: Duration
    /// At most this many sessions (active and passivated, those resumed from the store
    /// included) exist; creating one more is refused (503 `too-many-sessions`).
    package var maxSessions: Int
    /// At most this many sessions are created per second (429 `too-many-creations` beyond).
    package var maxCreationsPerSecond: Double
    /// Sessions shared with other coordinators through the PostgreSQL store, each owned by one
    /// at a time (`nil`: this coordinator's sessions are its own).
    package var spread: SessionSpreadSettings?

    /// The defaults: 5 minutes idle, 10,000 sessions, 100 creations per second, not spread.
    package init(
        idleTimeout: Duration = .seconds(300), maxSessions: Int = 10_000, maxCreationsPerSecond: Double = 100, spread: SessionSpreadSettings? = nil
    ) {
        self.idleTimeout = idleTimeout
        self.maxSessions = maxSessions
        self.maxCreationsPerSecond = maxCreationsPerSecond
        self.spread = spread
    }
}
