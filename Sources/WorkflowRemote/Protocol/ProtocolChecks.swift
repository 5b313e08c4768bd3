/// The remote protocol's checks for lost messages, each of which can be switched off, only so
/// the deterministic simulator's tests can show that each one matters: with one off, a pinned
/// seed of the driver simulation breaks an invariant the check keeps (FoundationDB's BUGGIFY
/// spirit: a check nothing shows to matter may as well be missing).
///
/// Every check is on by default and a runtime always runs with all of them: the struct is held
/// by `RemoteRuntimeConfiguration.protocolChecks`, which is `package`, not public, and no
/// configuration file or daemon setting reaches it. Each field is read at the one place its
/// check is made.
package struct ProtocolChecks: Sendable, Equatable {
    /// The worker rejoins when its connection to the parent is re-established after a
    /// disconnect (`WorkerStateMachine.handshakeSucceeded(at:)`): what was in flight either way
    /// may be lost, and nothing later need reveal it.
    package var workerRejoinsOnReconnect = true
    /// The worker fences when an EVENT's first sequence is not the one after the last it applied
    /// (`WorkerStateMachine.eventsArrived`): applying it would skip the lost events.
    package var workerChecksEventSequence = true
    /// The parent takes events a live worker leaves unacknowledged past the request deadline as
    /// lost in transit (`ParentStateMachine.livenessAction(of:at:)`).
    package var parentDeadlinesAcknowledgements = true
    /// The parent takes a gap in a placement's OUTPUTS numbers as messages lost in transit
    /// (`ParentStateMachine.outputsMessage(childID:epoch:number:)`).
    package var parentChecksOutputsNumbers = true

    /// Every check on: what every runtime runs with.
    package init() {}
}
