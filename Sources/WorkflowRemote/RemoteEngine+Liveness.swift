import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// Security checks and heartbeats: who may join, and who is still there.
extension RemoteEngine {
    // MARK: Security

    func serviceSecurity() {
        let (refused, failedHandshakes) = sockets.serviceSecurity()
        for key in refused {
            // A public key is not a secret; logging it tells an operator which worker to allow.
            logger.warning("refused a worker whose key is not allowed", metadata: ["publicKey": "\(key.z85)"])
        }
        if failedHandshakes > 0 {
            logger.warning("a peer failed the CURVE handshake (wrong server key?)", metadata: ["count": "\(failedHandshakes)"])
        }
        if !refused.isEmpty || failedHandshakes > 0 {
            shared.count { $0.refusedPeers += refused.count + failedHandshakes }
            metrics.refusedPeers.increment(by: Int64(refused.count + failedHandshakes))
        }
    }

    // MARK: Heartbeats

    /// Heartbeats both ways: each side sends one on a link it has otherwise left idle for an
    /// interval, and any message counts as a sign of life. A worker silent for
    /// `interval × liveness` is dead to its parent; a parent silent that long makes the worker
    /// reconnect on a fresh socket and say HELLO again, backing off exponentially.
    func runTimers() {
        let now = ContinuousClock.now
        checkDrainDeadline(now: now)
        let interval = configuration.heartbeatInterval
        // At most ten times per interval: the checks below walk every worker and child, and a
        // busy loop iterates far more often than that.
        guard now >= nextTimerCheck else { return }
        nextTimerCheck = now + interval / 10
        reportSuppressedWarnings()
        updateGauges()
        let deadAfter = interval * configuration.heartbeatLiveness
        if sockets.hasUpstream, !shuttingDown {
            // Not while a HELLO is unanswered or refused: the parent would only answer RECONNECT,
            // and that answer would keep the silence rule (the back-off retry) from firing.
            if shared.isWelcomed, now - lastSentUpstream >= interval {
                sendUpstream(kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            }
            let backoff = interval * (1 << min(reconnectAttempts, 5))
            if now - lastHeardUpstream > deadAfter + backoff {
                if isLeaving {
                    stopHostingWhileLeaving(silentFor: now - lastHeardUpstream)
                } else {
                    reconnectToParent(silentFor: now - lastHeardUpstream)
                }
            }
        }
        for (id, peer) in workers {
            if now - peer.lastHeard > deadAfter {
                removeWorker(id, reason: "silent for \(deadAfter)")
            } else if now - peer.lastSent >= interval {
                sendToWorker(id, kind: .heartbeat, correlationID: 0, nodePath: "", payloads: [])
            }
        }
    }

    /// Fencing, the worker's half: a worker that hosts children and has neither heard from nor
    /// sent to its parent for `interval × liveness` may have been declared dead (the parent
    /// declares a worker dead when it has heard nothing from it that long, and it cannot have
    /// heard anything more recent than this worker's last send). Its children may then run on
    /// another worker already, replaying the events still queued here. So before it reads any
    /// of that input, it stops its children and rejoins on a fresh socket: the old socket, and
    /// every event queued on it, is closed unread. Returns whether it did.
    @discardableResult
    func fenceIfCutOffFromParent() -> Bool {
        guard sockets.hasUpstream, !shuttingDown, !hosted.isEmpty else { return false }
        let now = ContinuousClock.now
        let deadAfter = configuration.heartbeatInterval * configuration.heartbeatLiveness
        let silence = max(now - lastHeardUpstream, now - lastSentUpstream)
        guard silence > deadAfter else { return false }
        if isLeaving {
            stopHostingWhileLeaving(silentFor: silence)
            return true
        }
        logger.warning(
            "cut off from the parent for the liveness window; stopping hosted children before reading anything queued",
            metadata: ["silent": "\(silence)", "children": "\(hosted.count)"])
        reconnectToParent(silentFor: silence)
        return true
    }

    /// Stops every hosted child and drops what was queued for the parent: a parent that lost
    /// track of this worker places its children again (restoring them from their snapshots and
    /// replaying their events), so the copies here would only diverge, and their own workers
    /// and side effects would keep running for nobody.
    func forgetHostedChildren() {
        // A drain cannot hand anything over now: the parent moves these children as after a failure.
        finishDrain(.notConnected)
        shared.setWelcomed(false)
        for (_, child) in hosted { child.stop() }
        let stopped = hosted.count
        if stopped > 0 { shared.count { $0.stopped += stopped } }
        hosted.removeAll()
        pendingRenderings.removeAll()
        pendingOutputs.removeAll()
        appliedEvents.removeAll()
        acknowledgedEvents.removeAll()
        flushOrder.removeAll()
        needsRender.removeAll()
        upstreamOutbox = Outbox()
    }

    func reconnectToParent(silentFor silence: Duration) {
        reconnectAttempts += 1
        logger.warning("the parent is silent; reconnecting", metadata: ["silent": "\(silence)", "attempt": "\(reconnectAttempts)"])
        forgetHostedChildren()
        do {
            try sockets.reconnectUpstream()
        } catch {
            logger.error("cannot reconnect to the parent: \(error)")
        }
        lastHeardUpstream = .now
        sendHello()
    }
}
