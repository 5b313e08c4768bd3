/// A connected worker a child may be placed on or moved to, as the placement and rebalance rules
/// see it (`PoolPlacement.choose`, `RebalancePlan`): a value, so the rules are tested without I/O.
package struct PlacementCandidate: Equatable {
    package var name: String
    package var pool: String
    /// Its children, of every type and placement.
    package var load: Int
    /// The state version it reads and writes, per hosted type, as its HELLO says
    /// (`HelloPayload.stateVersions`). A type it does not list counts as version 1, the version
    /// of a workflow that declares none: a worker that predates the announcement is never sent
    /// a state written by a newer build.
    package var stateVersions: [String: Int]

    package init(name: String, pool: String, load: Int, stateVersions: [String: Int] = [:]) {
        self.name = name
        self.pool = pool
        self.load = load
        self.stateVersions = stateVersions
    }

    /// The state version of `typeName` this worker reads and writes.
    package func stateVersion(of typeName: String) -> Int {
        stateVersions[typeName] ?? 1
    }

    /// Whether this worker can start a child of `typeName` from a snapshot of `stateVersion`:
    /// a build reads its own version and (by its `StateMigrating` migration) older ones, never a
    /// newer one, which it would refuse (`RemoteChildError.undecodableSnapshot`).
    package func reads(_ typeName: String, stateVersion: Int) -> Bool {
        stateVersion <= self.stateVersion(of: typeName)
    }
}
