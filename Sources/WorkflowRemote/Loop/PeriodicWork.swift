/// What the loop's timers have done (`RemoteRuntime.periodicWork()`): how often they looked at
/// the runtime's tables and how many children and workers they looked at. The timers run ten
/// times per heartbeat interval whatever the loop is doing, so their work must be bounded by
/// what changed, never by what is held; these counts let a test hold them to that, by counting
/// rather than timing.
package struct PeriodicWork: Sendable, Equatable {
    /// Timer checks since the loop began.
    package var checks: Int
    /// Children and workers looked at by all of them.
    package var visits: Int
    /// The most looked at by one check since the previous `periodicWork()`.
    package var mostVisitsInOneCheck: Int
}
