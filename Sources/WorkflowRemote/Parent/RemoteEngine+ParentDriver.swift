/// The parent driver's glue to its state machine (`ParentStateMachine`): performing what the
/// machine decides about the workers, with the loop's clock and sockets. The messages themselves
/// are read in `RemoteEngine+MessagesFromWorkers.swift` and sent in
/// `RemoteEngine+SendsToWorkers.swift`.
extension RemoteEngine {
    /// The liveness rule at `now`: silent workers are removed (their children move), idle links
    /// get a heartbeat.
    func performLiveness(at now: ContinuousClock.Instant) {
        for id in Array(parent.workers.keys) {
            switch parent.livenessAction(of: id, at: now) {
            case .declareDead(let id, _):
                removeWorker(id, reason: "stopped answering (no heartbeat for \(parent.configuration.liveness.secondsText))")
            case .declareLost(let id, let childID, let waited):
                let path = proxies[childID]?.path ?? "a child"
                removeWorker(id, reason: "lost messages in transit (no acknowledgement of events sent to \(path) for \(waited.secondsText))")
            case .sendHeartbeat(let id):
                sendToWorker(id, kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            case nil:
                break
            }
        }
    }

    /// The child `childID` no longer runs on `peer` (stopped, refused, no answer in time); a
    /// drain it ended is reported.
    func unplace(_ childID: UInt64, from peer: WorkerPeer) {
        if parent.unplaced(childID, from: peer.id) { reportDrained(peer) }
    }
}
