import Foundation
import Logging
import WireProtocol
import ZeroMQ
@_spi(WorkflowRuntime) import Workflow

/// The worker's lease on its children: the connection to the parent as the socket's monitor
/// reports it, the heartbeat and silence timers, and the fence that stops every hosted child once
/// the parent may have declared this worker dead (the rules are `WorkerStateMachine+Lease.swift`'s;
/// this performs them).
extension WorkerDriver {
    /// The worker's side of its connection to the parent, as libzmq's monitor reports it: the
    /// parent refusing this worker at the handshake is said here, in this worker's own log (the
    /// socket itself only ever shows an empty queue), and the silence rule starts counting once
    /// a handshake has succeeded; a closed connection moves a worker of a parent with standbys
    /// to the parent's next endpoint at once.
    func handleUpstreamConnection(_ event: ZMQSocketMonitor.Event) {
        switch event.kind {
        case .handshakeSucceeded:
            let handshake = worker.handshakeSucceeded(at: now)
            if handshake.sendHello { sendHello() }
            if handshake.recovered {
                logger.notice("connected to the parent", metadata: ["endpoint": "\(event.endpoint)"])
            }
            if let fence = handshake.fence {
                logger.notice(
                    "the connection to the parent was re-established; what was in flight may be lost, so the hosted children are placed again from their last acknowledged state",
                    metadata: ["endpoint": "\(event.endpoint)"])
                perform(fence)
            }
        case .handshakeFailedAuthentication:
            worker.handshakeFailed(at: now)
            var metadata: Logger.Metadata = ["endpoint": "\(event.endpoint)", "zapStatus": .stringConvertible(event.value)]
            if case .curve(let keyPair, _) = configuration.parentSecurity { metadata["publicKey"] = "\(keyPair.publicKey.z85)" }
            warnLimited(
                "the parent refused this worker at the CURVE handshake",
                detail: "its public key is not on the parent's allow-list (add it to allowed-workers and restart the coordinator)",
                metadata: metadata, level: .error)
        case .handshakeFailedNoDetail, .handshakeFailedProtocol:
            worker.handshakeFailed(at: now)
            let reason = event.kind == .handshakeFailedProtocol ? Self.protocolFailure(event.value) : "the parent closed the connection during it"
            warnLimited(
                "the handshake with the parent failed",
                detail: "\(reason); check that security.server_public_key is the coordinator's public key and both sides use the same security mode",
                metadata: ["endpoint": "\(event.endpoint)"], level: .error)
        case .disconnected:
            if let fence = worker.connectionClosed(at: now) {
                logger.notice(
                    "the connection to the parent closed; moving to its next endpoint at once (a standby may be taking over)",
                    metadata: ["endpoint": "\(event.endpoint)"])
                perform(fence)
            }
        case .connectRetried:
            if worker.connectRetried() {
                logger.notice("no connection to the parent yet; retrying", metadata: ["endpoint": "\(event.endpoint)"])
            }
        default:
            break
        }
    }

    /// A `ZMQ_PROTOCOL_ERROR_*` code of a failed handshake, in words.
    static func protocolFailure(_ code: UInt32) -> String {
        switch code {
        case 0x1100_0002: "the two sides use different security mechanisms (CURVE on one, plaintext on the other)"
        case 0x1100_0001: "a cryptographic check failed (a wrong server key)"
        case 0x3000_0000...0x3000_00FF: "the parent's authentication did not answer properly"
        default: "protocol error 0x\(String(code, radix: 16))"
        }
    }

    /// The worker's timers at `now` (the loop's `runTimers`, at most ten times per heartbeat
    /// interval): a heartbeat on a link left idle for an interval, and the fence once the parent
    /// has been silent for the liveness window.
    func tick(at now: ContinuousClock.Instant) {
        let tick = worker.tick(at: now)
        if tick.sendHeartbeat { sendUpstream(kind: .heartbeat, correlationID: 0, nodePath: "", payloads: []) }
        if let fence = tick.fence { perform(fence) }
    }

    /// Fencing, the worker's half: a worker that hosts children and has neither heard from nor
    /// sent to its parent for `interval × liveness` may have been declared dead (the parent
    /// declares a worker dead when it has heard nothing from it that long, and it cannot have
    /// heard anything more recent than this worker's last send). Its children may then run on
    /// another worker already, replaying the events still queued here. So before it reads any
    /// of that input, it stops its children and rejoins on a fresh socket: the old socket, and
    /// every event queued on it, is closed unread. The rule is the state machine's
    /// (`WorkerStateMachine.silenceBeyondLease`); this performs it. Returns whether it fenced.
    @discardableResult
    func fenceIfCutOffFromParent() -> Bool {
        let heldFenced = performHeldFences()
        guard let fence = worker.fenceIfLeaseRanOut(at: now) else { return heldFenced }
        if case .reconnect(let silence, _, _, let forgotten) = fence {
            logger.warning(
                "cut off from the parent for the liveness window; stopping hosted children before reading anything queued",
                metadata: ["silentSeconds": .stringConvertible(silence.loggedSeconds), "children": .stringConvertible(forgotten.children.count)])
        }
        perform(fence)
        return true
    }

    /// Carries out the fences held while a hosted pass settled (`holdsFences`), in the order they
    /// were decided. Returns whether there were any.
    @discardableResult
    func performHeldFences() -> Bool {
        guard !holdsFences, !heldFences.isEmpty else { return false }
        let fences = heldFences
        heldFences.removeAll()
        for fence in fences { perform(fence) }
        return true
    }

    /// Performs a fence the state machine decided: its children stop, and (unless the worker is
    /// leaving) it rejoins on a fresh socket. Held while a hosted pass settles (`holdsFences`):
    /// stopping the child that renders would re-enter its host.
    func perform(_ fence: WorkerStateMachine<any AnyHostedChild>.Fence) {
        if holdsFences {
            heldFences.append(fence)
            return
        }
        switch fence {
        case .stopWhileLeaving(let silence, let forgotten):
            logger.warning(
                "no word from the parent for the liveness window while draining; stopping hosted children",
                metadata: ["silentSeconds": .stringConvertible(silence.loggedSeconds), "children": .stringConvertible(forgotten.children.count)])
            stopForgotten(forgotten)
        case .reconnect(let silence, let attempt, let afterFailedHandshake, let forgotten):
            if afterFailedHandshake {
                // Said (rate limited) when the handshake failed; the retry itself is routine.
                logger.info("connecting to the parent again after a failed handshake", metadata: ["attempt": .stringConvertible(attempt)])
            } else if silence == .zero {
                // Not silence (lost input, said where it was found): the retry itself is routine.
                logger.info("connecting to the parent again", metadata: ["attempt": .stringConvertible(attempt)])
            } else {
                logger.warning(
                    "the parent is silent; reconnecting",
                    metadata: ["silentSeconds": .stringConvertible(silence.loggedSeconds), "attempt": .stringConvertible(attempt)])
            }
            stopForgotten(forgotten)
            do {
                // A parent with standbys: the next of its endpoints (only the leader binds its own).
                try sockets.reconnectUpstream(movingOn: sockets.hasAlternateParents)
                if sockets.hasAlternateParents {
                    logger.notice("trying the parent's next endpoint", metadata: ["endpoint": "\(sockets.currentParentEndpoint ?? "-")"])
                }
            } catch {
                logger.error("cannot reconnect to the parent: \(error)")
            }
            sendHello()
        }
    }

    /// Stops the children the state machine forgot, drops what was queued for the parent and
    /// reports a drain that ended with them: a parent that lost track of this worker places its
    /// children again (restoring them from their snapshots and replaying their events), so the
    /// copies here would only diverge, and their own workers and side effects would keep
    /// running for nobody.
    func stopForgotten(_ forgotten: WorkerStateMachine<any AnyHostedChild>.Forgotten) {
        shared.setWelcomed(false)
        if let outcome = forgotten.drain { reportDrain(outcome) }
        for hosted in forgotten.children { stopHosting(hosted, because: "cut off from the parent") }
        if !forgotten.children.isEmpty { shared.count { $0.stopped += forgotten.children.count } }
        upstreamOutbox.removeAll()
    }
}
