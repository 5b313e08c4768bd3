import Foundation
import ZeroMQ
@testable import WorkflowRemote

/// One simulated process's network (`LoopTransport`): the parent's listener, which reads every
/// open link of the simulated network, or a worker's connection to the parent (one link, replaced
/// by a fresh one when the worker reconnects). The real drivers run over it exactly as over
/// `LoopSockets`; only the wire is the simulation's.
final class SimulatedTransport: LoopTransport {
    unowned let network: DriverNetwork
    /// The worker this transport connects upstream for (nil: the parent's listener).
    let worker: Int?
    /// The worker's current link to the parent.
    private(set) var link: SimulatedLink?
    /// Where the listener's fair queueing resumes (libzmq's ROUTER reads its peers in turn).
    private var listenerCursor = 0
    private var isClosed = false

    init(network: DriverNetwork, worker: Int?) {
        self.network = network
        self.worker = worker
        if let worker { link = network.connect(worker: worker) }
    }

    var hasUpstream: Bool { worker != nil }
    var parentEndpointCount: Int { 1 }
    var hasAlternateParents: Bool { false }
    var currentParentEndpoint: String? { worker == nil ? nil : DriverNetwork.parentEndpoint }

    func reconnectUpstream(movingOn: Bool) throws {
        guard let worker, !isClosed else { return }
        link?.close()
        link = network.connect(worker: worker)
    }

    func upstreamConnectionEvents() -> [ZMQSocketMonitor.Event] {
        guard let link, !link.events.isEmpty else { return [] }
        defer { link.events.removeAll() }
        return link.events.map { event in
            switch event {
            case .handshakeSucceeded: ZMQSocketMonitor.Event(kind: .handshakeSucceeded, endpoint: DriverNetwork.parentEndpoint)
            case .disconnected: ZMQSocketMonitor.Event(kind: .disconnected, endpoint: DriverNetwork.parentEndpoint)
            }
        }
    }

    /// Never waits: the simulation advances the clock between steps.
    func poll(timeout: Duration, listenerOnly: Bool) -> (listener: Bool, upstream: Bool, security: Bool) {
        guard !isClosed else { return (false, false, false) }
        let listener = worker == nil && network.links.contains { !$0.arrivedAtParent.isEmpty }
        let upstream = !listenerOnly && !(link?.arrivedAtWorker.isEmpty ?? true)
        let security = !(link?.events.isEmpty ?? true)
        return (listener, upstream, security)
    }

    func serviceSecurity() -> (refused: [CurveKey], failedHandshakes: Int) { ([], 0) }

    func receiveFromListener(into received: inout ZMQFrameBuffer, copyingAtMost maxFrames: Int) -> WorkerID? {
        guard worker == nil, !isClosed else { return nil }
        let links = network.links
        guard !links.isEmpty else { return nil }
        for offset in 0..<links.count {
            let link = links[(listenerCursor + offset) % links.count]
            guard let frames = link.arrivedAtParent.popFirst() else { continue }
            listenerCursor = (listenerCursor + offset + 1) % links.count
            received.removeAll()
            link.routingID.withUnsafeBytes { received.append($0) }
            for frame in frames.prefix(maxFrames) { frame.withUnsafeBytes { received.append($0) } }
            return WorkerID(bytes: link.routingID)
        }
        return nil
    }

    func receiveFromUpstream(into received: inout ZMQFrameBuffer) -> Bool {
        guard !isClosed, let frames = link?.arrivedAtWorker.popFirst() else { return false }
        received.removeAll()
        for frame in frames { frame.withUnsafeBytes { received.append($0) } }
        return true
    }

    func sendToListenerPeer(_ peer: WorkerID, message: OutgoingMessage) throws(ZMQError) {
        guard !isClosed else { return }
        guard let link = network.link(routingID: peer.bytes),
            link.send(toWorker: Self.frames(of: message), at: network.clock.now, delay: network.delay())
        else { throw ZMQError(code: EHOSTUNREACH) }
        network.count.messagesToWorkers += 1
    }

    func sendUpstream(_ message: OutgoingMessage) throws(ZMQError) {
        guard !isClosed, let link else { return }
        let frames = Self.frames(of: message)
        network.sent(frames, by: link)
        link.send(toParent: frames, at: network.clock.now, delay: network.delay())
    }

    func close() {
        isClosed = true
        link?.close()
    }

    static func frames(of message: OutgoingMessage) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        message.forEachFrame { frame, _ in
            frames.append(Array(frame))
            return true
        }
        return frames
    }
}
