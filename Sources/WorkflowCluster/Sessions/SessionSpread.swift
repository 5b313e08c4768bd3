/// Sessions spread over several coordinators sharing one PostgreSQL store (`sessions.spread_lease_ms`
/// and `sessions.advertised_url`): each coordinator serves the sessions it owns, by a lease per
/// session (`SessionLeaseStore`), and sends a client asking for another's to that one's gateway.
package struct SessionSpreadSettings: Sendable, Equatable {
    /// How long a session's lease lasts: a coordinator that dies loses its sessions to the
    /// others about this long after its last renewal.
    package var lease: Duration
    /// This coordinator's gateway as clients reach it (`http://HOST:PORT`): where the others
    /// redirect requests for the sessions it owns.
    package var advertisedURL: String

    /// The lease to configure when in doubt, as the shared root's (`StoreSettings.recommendedLease`).
    package static let recommendedLease: Duration = StoreSettings.recommendedLease

    /// Creates settings.
    package init(lease: Duration = Self.recommendedLease, advertisedURL: String) {
        self.lease = lease
        self.advertisedURL = advertisedURL
    }
}

/// A coordinator's part in spread sessions, as its `SessionDirectory` uses it: the shared store's
/// session leases, this process's name in them, and its settings.
package struct SessionSpread: Sendable {
    /// The shared store, opened with `fencesSessionsByLease`.
    package var store: any SessionLeaseStore
    /// This process's name in the leases (unique per process: host, pid, endpoint).
    package var holder: String
    /// The lease and the advertised gateway.
    package var settings: SessionSpreadSettings

    /// Creates a value.
    package init(store: any SessionLeaseStore, holder: String, settings: SessionSpreadSettings) {
        self.store = store
        self.holder = holder
        self.settings = settings
    }
}
