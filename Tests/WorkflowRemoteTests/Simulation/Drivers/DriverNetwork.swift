import WireProtocol

/// The simulated network of a driver simulation (`DriverSimulation`): every link between a
/// worker's socket and the parent's listener, the delay of each message drawn from the seed, and
/// the messages each worker sent on links it no longer uses (what a stale peer could send again).
final class DriverNetwork {
    typealias Instant = ContinuousClock.Instant

    /// The top parent's id as a link's `parent` (workers are 0, 1, …).
    static let topParent = -1

    /// The endpoint of `parent`'s listener.
    static func endpoint(of parent: Int) -> String {
        parent == topParent ? "sim://parent" : "sim://worker-\(parent)"
    }

    let clock: VirtualClock
    var random: SimulationRandom
    /// The longest delay of a message, per run.
    var maxDelayMilliseconds: Int
    /// The links the listener reads, in the order they connected (closed ones are removed).
    private(set) var links: [SimulatedLink] = []
    private var linksByRoutingID: [[UInt8]: SimulatedLink] = [:]
    private var nextLink = 0
    /// Per worker, a few messages it sent on the link it used last: a stale peer's messages.
    private(set) var oldMessages: [Int: [[[UInt8]]]] = [:]
    private var recentMessages: [ObjectIdentifier: [[[UInt8]]]] = [:]
    var count = Counts()
    /// Runs the rest of the world one step while `process`'s loop waits for renderings in a
    /// render pass's settle (set by the simulation).
    var waitInSettle: ((_ process: Int) -> Void)?

    struct Counts {
        var messagesToWorkers = 0
        var messagesToParent = 0
    }

    init(clock: VirtualClock, random: SimulationRandom, maxDelayMilliseconds: Int) {
        self.clock = clock
        self.random = random
        self.maxDelayMilliseconds = maxDelayMilliseconds
    }

    func delay() -> Duration {
        random.milliseconds(in: 0...maxDelayMilliseconds)
    }

    /// A fresh socket of `worker` connecting to `parent`'s listener: its handshake completes
    /// after a delay (or once that listener is up again).
    func connect(worker: Int, to parent: Int) -> SimulatedLink {
        nextLink += 1
        let handshakeAt = max(clock.now, listenerDownUntil[parent] ?? clock.now) + delay()
        let link = SimulatedLink(routingID: Array("worker-\(worker)#\(nextLink)".utf8), worker: worker, parent: parent, handshakeAt: handshakeAt)
        links.append(link)
        linksByRoutingID[link.routingID] = link
        return link
    }

    func link(routingID: [UInt8]) -> SimulatedLink? {
        linksByRoutingID[routingID]
    }

    /// Until when a listener's process is down (its workers' sockets reconnect once it is back).
    private var listenerDownUntil: [Int: Instant] = [:]

    /// `parent`'s process ended (crashed or left) and binds again at `restartsAt`: the
    /// connections to it break, and its workers' sockets reconnect to the new process then.
    func listenerEnded(_ parent: Int, restartsAt: Instant) {
        listenerDownUntil[parent] = restartsAt
        for link in links where link.parent == parent {
            link.arrivedAtParent.removeAll()
            link.disconnect(reconnectAt: restartsAt + delay())
        }
    }

    /// Moves what is due, completes due handshakes, and forgets closed links (keeping what
    /// their workers sent last as stale messages).
    func advance() {
        let now = clock.now
        var closed = false
        for link in links {
            link.advance(to: now, delay: delay)
            if link.isClosed { closed = true }
        }
        guard closed else { return }
        for link in links where link.isClosed {
            linksByRoutingID[link.routingID] = nil
            if let recent = recentMessages.removeValue(forKey: ObjectIdentifier(link)), !recent.isEmpty {
                oldMessages[link.worker] = recent
            }
        }
        links.removeAll { $0.isClosed }
    }

    /// Records what a worker sent (the last few per link, for stale replays later).
    func sent(_ frames: [[UInt8]], by link: SimulatedLink) {
        count.messagesToParent += 1
        var recent = recentMessages[ObjectIdentifier(link), default: []]
        if recent.count >= 8 { recent.removeFirst() }
        recent.append(frames)
        recentMessages[ObjectIdentifier(link)] = recent
    }

    /// A child's handover began: its parent (`topParent` or a nested worker's index) sent
    /// RELEASE for its placement `epoch`.
    struct Release {
        let parent: Int
        let childID: UInt64
        let epoch: UInt64
        let path: String
    }

    /// The RELEASEs sent since the last `takeReleases()`.
    private var releases: [Release] = []

    /// A parent sent `frames`, a RELEASE (its first frame the envelope's header).
    func releaseSent(by parent: Int, frames: [[UInt8]]) {
        guard let header = frames.first, let decoded = try? header.withUnsafeBytes({ try EnvelopeHeader(decoding: $0) }) else { return }
        releases.append(Release(parent: parent, childID: decoded.correlationID, epoch: decoded.epoch, path: decoded.nodePath))
    }

    func takeReleases() -> [Release] {
        guard !releases.isEmpty else { return [] }
        defer { releases.removeAll() }
        return releases
    }

    /// The next instant something on the network is due (a delivery or a handshake), if any.
    var messagesHeld: Int { links.reduce(0) { $0 + $1.held } }
}
