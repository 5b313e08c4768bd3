/// Something that serves while its coordinator is a standby, so that clients and load balancers
/// can tell a standby from a dead coordinator: the gateway answers every API request 503
/// `standby` with `Retry-After`, and its readiness probe names the role.
package protocol StandbyCompanion: Sendable {
    /// Serves until cancelled (the coordinator took the lease, or is stopping); throws if it
    /// cannot serve (a port another process holds).
    func serveStandby(context: CoordinatorContext) async throws
}
