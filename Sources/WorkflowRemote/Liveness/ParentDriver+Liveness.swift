import Foundation
import Logging
import WireProtocol
import ZeroMQ

/// Who may join and who is still there, the parent's side: the workers' socket's security (its
/// ZAP handler's refusals and failed handshakes, said in the log) and the liveness rule the
/// parent's state machine keeps (`ParentStateMachine+Liveness.swift`), performed.
extension ParentDriver {
    /// What the workers' socket's security refused since the last look (`LoopSockets`): every
    /// warning is rate limited, since a refused or misconfigured peer retries its connection
    /// about ten times a second for as long as it runs.
    func peersRefused(_ refused: [CurveKey], failedHandshakes: Int) {
        for key in refused {
            // A public key is not a secret; logging it tells an operator which worker to allow.
            warnLimited("refused a worker whose key is not allowed", metadata: ["publicKey": "\(key.z85)"])
        }
        for _ in 0..<failedHandshakes {
            warnLimited("a peer failed the CURVE handshake", detail: "it does not use this coordinator's public key as its server key, or does not speak CURVE")
        }
        if !refused.isEmpty || failedHandshakes > 0 {
            shared.count { $0.refusedPeers += refused.count + failedHandshakes }
            metrics.refusedPeers.increment(by: Int64(refused.count + failedHandshakes))
        }
    }

    /// The liveness rule at `now`, the workers heard up to `listenedUntil` (the loop's last
    /// poll): silent workers are removed (their children move), idle links get a heartbeat.
    func performLiveness(at now: ContinuousClock.Instant, listenedUntil: ContinuousClock.Instant) {
        // Per worker, and per child only those with events awaiting an acknowledgement.
        countedVisits += parent.workers.count * (1 + parent.awaitingAcknowledgement.count)
        for id in Array(parent.workers.byConnection.keys) {
            switch parent.livenessAction(of: id, at: now, listenedUntil: listenedUntil) {
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
}
