import Foundation

/// What the parent role remembers only for the inspector and the metrics: per child, events sent,
/// the size of its last rendering, when its pending request left and when its placement began.
struct InspectionCounters {
    var eventsSent: [UInt64: UInt64] = [:]
    var placedAt: [UInt64: Date] = [:]
    var renderingBytes: [UInt64: Int] = [:]
    var requestSent: [UInt64: (sequence: UInt64, at: ContinuousClock.Instant)] = [:]
    var lastRoundTrip: [UInt64: Duration] = [:]

    mutating func forget(childID: UInt64) {
        eventsSent[childID] = nil
        placedAt[childID] = nil
        renderingBytes[childID] = nil
        requestSent[childID] = nil
        lastRoundTrip[childID] = nil
    }
}

/// What the inspector and the metrics see of the parent role: per child, its round trips, its
/// last rendering's size and its events; per worker, its load and liveness.
extension ParentDriver {
    /// A START or UPDATE left for `childID`: its round trip ends when the worker's rendering of
    /// that props sequence arrives.
    func noteRequestSent(childID: UInt64, sequence: UInt64) {
        inspection.requestSent[childID] = (sequence, now)
    }

    /// A rendering of `childID` arrived (`bytes` long).
    func noteRendering(childID: UInt64, bytes: Int) {
        inspection.renderingBytes[childID] = bytes
        metrics.renderingsReceived.increment()
    }

    /// Ends `proxy`'s round trip: the rendering of its current props has arrived.
    func noteRoundTrip(of proxy: any AnyRemoteChildProxy) {
        guard let request = inspection.requestSent.removeValue(forKey: proxy.childID) else { return }
        // A child that failed instead of answering has no round trip to report.
        guard case .running = proxy.status, proxy.propsSequence >= request.sequence else { return }
        let elapsed = now - request.at
        inspection.lastRoundTrip[proxy.childID] = elapsed
        metrics.roundTrip.recordNanoseconds(elapsed.nanoseconds)
    }

    /// Sets the parent role's gauges from the counts kept as things change (`RemoteEngine.updateGauges`,
    /// ten times per heartbeat interval at most): nothing here walks the children.
    func updateGauges() {
        metrics.eventsOutstanding.set(unacknowledgedEvents.total)
        metrics.workersConnected.set(workers.count)
    }

    /// The parent role's children (with `tree`, only that tree's: `SessionLoop.treePrefix(of:)`)
    /// and workers as they are now.
    func inspect(tree: String? = nil) -> RemoteRuntimeInspection {
        let now = self.now
        let chosen = tree.map { (proxiesByTree[$0] ?? []).compactMap { proxies[$0] } } ?? Array(proxies.walkAll())
        let children = chosen.map { proxy -> RemoteRuntimeInspection.Child in
            let sent = inspection.eventsSent[proxy.childID] ?? 0
            let outstanding = proxy.unacknowledgedCount
            let host = parent.host(of: proxy.childID)
            return RemoteRuntimeInspection.Child(
                path: proxy.path, typeName: proxy.typeName, placement: "\(proxy.placement)", status: proxy.status,
                worker: host.flatMap { workers[$0]?.name }, propsSequence: proxy.propsSequence, propsBytes: proxy.encodedProps?.count ?? 0,
                renderingBytes: inspection.renderingBytes[proxy.childID], eventsSent: sent,
                eventsAcknowledged: sent - UInt64(min(outstanding, Int(sent))), eventsOutstanding: outstanding,
                lastRoundTripSeconds: inspection.lastRoundTrip[proxy.childID].map(\.seconds), epoch: parent.epoch(of: proxy.childID),
                placedAt: host == nil ? nil : inspection.placedAt[proxy.childID])
        }
        let peers = workers.values.compactMap { peer -> RemoteRuntimeInspection.Worker? in
            guard let state = parent.workers[peer.id] else { return nil }
            return RemoteRuntimeInspection.Worker(
                name: peer.name, pool: state.pool, capacity: peer.capacity, load: state.children.count,
                hostedTypes: state.hostedTypes.sorted(), secondsSinceHeard: (now - state.lastHeard).seconds, joinedAt: peer.joinedAt,
                processID: peer.processID, hostName: peer.hostName, isDraining: state.isDraining)
        }
        return RemoteRuntimeInspection(
            name: configuration.name, children: children.sorted { $0.path < $1.path }, workers: peers.sorted { $0.name < $1.name })
    }
}
