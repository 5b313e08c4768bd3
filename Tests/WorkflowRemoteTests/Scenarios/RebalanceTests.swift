import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// Rebalancing with real runtimes over ipc: children move while the tree runs, each by a planned
/// handover, never `unavailable`, every event applied once.
@Suite(.serialized) struct RebalanceTests {
    static let members = ["w1", "w2", "w3"]

    static func parent(_ name: String) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name)
        configuration.listenEndpoint = uniqueEndpoint(name)
        // Generous windows: on a loaded machine a worker slow to answer must not be taken for
        // dead or late (that would be a failover, not the rebalance under test).
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 100
        configuration.requestTimeout = .seconds(60)
        configuration.poolMembers = ["p": members]
        configuration.rebalancing = RebalancePolicy(movesAtOnce: 4, spread: 2)
        return try RemoteRuntime(configuration: configuration)
    }

    static func worker(_ name: String, parent: RemoteRuntime) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name)
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.pool = "p"
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 100
        return try RemoteRuntime(configuration: configuration)
    }

    static func running(_ parent: RemoteRuntime) -> [String: String] {
        parent.statuses.compactMapValues { status in
            if case .running(let worker) = status { worker } else { nil }
        }
    }

    /// Counts the children reported unavailable, from when it is made until `stop()`.
    final class UnavailableWatch: Sendable {
        private let count = Mutex(0)
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(_ parent: RemoteRuntime) {
            let changes = parent.statusChanges
            let started = Task { [self] in
                for await change in changes {
                    if case .unavailable = change.status { count.withLock { $0 += 1 } }
                }
            }
            task.withLock { $0 = started }
        }

        var unavailable: Int { count.withLock { $0 } }

        func stop() { task.withLock { $0?.cancel() } }
    }

    @Test("workers joining a pool whose 60 children all run on one worker take their share, while every counter gets its events exactly once")
    func joiningWorkersTakeTheirShare() async throws {
        let parent = try Self.parent("rebalance-pool")
        let watch = UnavailableWatch(parent)
        var workers = [try Self.worker("w1", parent: parent)]
        await parent.waitForWorkers(count: 1)
        let keys = (0..<60).map { "c\($0)" }
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: 1) }, placement: .pool("p")), loop: parent)
        try await eventually("60 children on w1") { Self.running(parent).values.filter { $0 == "w1" }.count == 60 }

        workers.append(try Self.worker("w2", parent: parent))
        workers.append(try Self.worker("w3", parent: parent))
        await parent.waitForWorkers(count: 3)
        // Events while the children move: each counter must end at exactly 5.
        for round in 1...5 {
            let screens = try await rendering(of: host, "all 60 counters at \(round - 1)") { screens in
                keys.allSatisfy { (screens[$0]?.count ?? -1) >= round - 1 }
            }
            for key in keys { screens[key]!.onIncrement.send(1) }
        }
        try await eventually("the pool spread evenly") {
            let load = Self.running(parent).values.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            return Self.running(parent).count == 60 && load.count == 3 && load.values.allSatisfy { (19...21).contains($0) }
        }
        let final = try await rendering(of: host, "every counter at 5") { screens in keys.allSatisfy { screens[$0]?.count == 5 } }
        #expect(keys.allSatisfy { final[$0]?.count == 5 })
        #expect(watch.unavailable == 0, "a child was shown unavailable during the rebalance")

        await host.stop()
        watch.stop()
        for worker in workers { await worker.shutdown() }
        await parent.shutdown()
    }

    @Test("hashed children that ran elsewhere while their owner was away move back when it joins")
    func hashedChildrenMoveBackToTheirOwner() async throws {
        let parent = try Self.parent("rebalance-hashed")
        let watch = UnavailableWatch(parent)
        var workers = [try Self.worker("w1", parent: parent), try Self.worker("w2", parent: parent)]
        await parent.waitForWorkers(count: 2)
        let keys = (0..<30).map { "c\($0)" }
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: 1) }, placement: .hashed(pool: "p")), loop: parent)
        try await eventually("30 children running on w1 and w2") { Self.running(parent).count == 30 }
        let owners = Self.running(parent).keys.reduce(into: [String: String]()) { $0[$1] = PoolPlacement.ranked(Self.members, for: $1)[0] }
        #expect(owners.values.contains("w3"), "some children belong to the absent w3")

        workers.append(try Self.worker("w3", parent: parent))
        await parent.waitForWorkers(count: 3)
        try await eventually("every child on its owner") { Self.running(parent) == owners }
        #expect(watch.unavailable == 0, "a child was shown unavailable while moving back")

        await host.stop()
        watch.stop()
        for worker in workers { await worker.shutdown() }
        await parent.shutdown()
    }
}
