import Foundation

/// A workflow whose snapshotted state can be read from the encodings of earlier state versions.
///
/// A snapshot records the `stateVersion` its state was written with. When `State` gains or
/// changes a field, raise `stateVersion` and say here how an older encoding becomes today's
/// `State`: a restore (a coordinator's `--restore`, a remote child placed again from its last
/// snapshot, a rolling upgrade that moves a child onto a worker of the new build) then keeps the
/// state instead of starting the child afresh. A snapshot of a *newer* version is never guessed
/// at: it is rejected (`SnapshotError.versionMismatch`).
public protocol StateMigrating: StablyNamedWorkflow where State: Codable {
    /// Today's `State` from `data`, the JSON a build of `stateVersion` `version` (lower than
    /// today's) wrote. Throw when the data cannot be read: the snapshot is then rejected with the
    /// reason, never silently replaced.
    static func migrateState(from data: Data, version: Int) throws -> State
}

extension StateMigrating {
    /// Opens the existential for `StateCoding`: migrates and returns the state as `Any`.
    static func migratedState(from data: Data, version: Int) throws -> Any {
        try migrateState(from: data, version: version)
    }
}
