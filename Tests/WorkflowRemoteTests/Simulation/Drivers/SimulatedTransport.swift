import Foundation
import ZeroMQ
@testable import WorkflowRemote

/// One simulated process's network (`LoopTransport`): its listener, which reads every open link
/// to it (the top parent's, a nested worker's), and its connection to its parent (a worker's: one
/// link, replaced by a fresh one when the worker reconnects), or both. The real drivers run over
/// it exactly as over `LoopSockets`; only the wire is the simulation's.
final class SimulatedTransport: LoopTransport {
    unowned let network: DriverNetwork
    /// The process this is (`DriverNetwork.topParent` or a worker's index).
    let process: Int
    /// The process whose listener this one's upstream link connects to (nil: no parent).
    let parent: Int?
    /// Whether workers connect to this process.
    let listens: Bool
    /// The worker's current link to the parent.
    private(set) var link: SimulatedLink?
    /// Where the listener's fair queueing resumes (libzmq's ROUTER reads its peers in turn).
    private var listenerCursor = 0
    private var isClosed = false
    /// Told whenever this process hears from its parent (the lease invariant), if watched.
    var leaseWatch: LeaseWatch?

    init(network: DriverNetwork, process: Int, parent: Int?, listens: Bool) {
        self.network = network
        self.process = process
        self.parent = parent
        self.listens = listens
        if let parent { link = network.connect(worker: process, to: parent) }
    }

    var hasUpstream: Bool { parent != nil }
    var parentEndpointCount: Int { 1 }
    var hasAlternateParents: Bool { false }
    var currentParentEndpoint: String? { parent.map(DriverNetwork.endpoint(of:)) }

    func reconnectUpstream(movingOn: Bool) throws {
        guard let parent, !isClosed else { return }
        link?.close()
        link = network.connect(worker: process, to: parent)
    }

    func upstreamConnectionEvents() -> [ZMQSocketMonitor.Event] {
        guard let link, let parent, !link.events.isEmpty else { return [] }
        defer { link.events.removeAll() }
        if link.events.contains(.handshakeSucceeded) { leaseWatch?.heard() }
        let endpoint = DriverNetwork.endpoint(of: parent)
        return link.events.map { event in
            switch event {
            case .handshakeSucceeded: ZMQSocketMonitor.Event(kind: .handshakeSucceeded, endpoint: endpoint)
            case .disconnected: ZMQSocketMonitor.Event(kind: .disconnected, endpoint: endpoint)
            }
        }
    }

    /// Never waits in the loop: the simulation advances the clock between steps. A render pass
    /// settling (`listenerOnly`) with nothing to read lets the rest of the world run a step
    /// (`DriverNetwork.waitInSettle`) and reads again.
    func poll(timeout: Duration, listenerOnly: Bool) -> (listener: Bool, upstream: Bool, security: Bool) {
        guard !isClosed else { return (false, false, false) }
        if listenerOnly, !listenerHasMessages { network.waitInSettle?(process) }
        let listener = listenerHasMessages
        let upstream = !listenerOnly && !(link?.arrivedAtWorker.isEmpty ?? true)
        let security = !(link?.events.isEmpty ?? true)
        return (listener, upstream, security)
    }

    private var listenerHasMessages: Bool {
        listens && network.links.contains { $0.parent == process && !$0.arrivedAtParent.isEmpty }
    }

    func serviceSecurity() -> (refused: [CurveKey], failedHandshakes: Int) { ([], 0) }

    func receiveFromListener(into received: inout ZMQFrameBuffer, copyingAtMost maxFrames: Int) -> WorkerID? {
        guard listens, !isClosed else { return nil }
        let links = network.links
        guard !links.isEmpty else { return nil }
        for offset in 0..<links.count {
            let link = links[(listenerCursor + offset) % links.count]
            guard link.parent == process, let frames = link.arrivedAtParent.popFirst() else { continue }
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
        leaseWatch?.heard()
        received.removeAll()
        for frame in frames { frame.withUnsafeBytes { received.append($0) } }
        return true
    }

    func sendToListenerPeer(_ peer: WorkerID, message: OutgoingMessage) throws(ZMQError) {
        guard !isClosed else { return }
        let frames = Self.frames(of: message)
        // A handover began (whether or not the RELEASE reaches the worker).
        if message.kind == .release { network.releaseSent(by: process, frames: frames) }
        guard let link = network.link(routingID: peer.bytes), link.parent == process,
            link.send(toWorker: frames, at: network.clock.now, delay: network.delay())
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
