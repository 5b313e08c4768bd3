import Foundation
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

/// Placement at a cold start, with real runtimes over ipc: 100 children placed in a pool of three
/// workers that join one by one after the tree started. Without the start's grace every child
/// landed on the first worker to join, and a hashed child's worker depended on who joined first.
@Suite(.serialized) struct PlacementSpreadTests {
    static let members = ["w1", "w2", "w3"]

    /// Starts a parent hosting 100 counters placed by `placement`, then the workers in
    /// `joinOrder`; returns each child's worker once all 100 run.
    static func place(_ placement: RemotePlacement, joinOrder: [String], run: String) async throws -> [String: String] {
        var configuration = RemoteRuntimeConfiguration(name: "spread-\(run)")
        configuration.listenEndpoint = uniqueEndpoint("spread-\(run)")
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 5
        configuration.poolMembers = ["p": members]
        // Long, so that a child placed before its pool is complete shows up as a pile-up here;
        // once every member has joined nothing waits for it.
        configuration.placementGrace = .seconds(60)
        let parent = try RemoteRuntime(configuration: configuration)
        let board = CounterBoardWorkflow(counters: (0..<100).map { .init(key: "c\($0)", step: 1) }, placement: placement)
        let host = WorkflowHost(workflow: board, loop: parent)
        var workers: [RemoteRuntime] = []
        for name in joinOrder {
            var worker = RemoteRuntimeConfiguration(name: name)
            worker.parentEndpoint = parent.listenEndpoint
            worker.pool = "p"
            worker.registry = remoteTestRegistry
            worker.heartbeatInterval = .milliseconds(100)
            worker.heartbeatLiveness = 5
            workers.append(try RemoteRuntime(configuration: worker))
            await parent.waitForWorkers(count: workers.count)
        }
        try await eventually("100 children running") { Self.running(parent).count == 100 }
        let placed = Self.running(parent)
        await host.stop()
        for worker in workers { await worker.shutdown() }
        await parent.shutdown()
        return placed
    }

    /// Path → worker of every running child.
    static func running(_ parent: RemoteRuntime) -> [String: String] {
        parent.statuses.compactMapValues { status in
            if case .running(let worker) = status { worker } else { nil }
        }
    }

    static func load(_ placed: [String: String]) -> [String: Int] {
        placed.values.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    @Test("least-loaded: a cold start spreads 100 children over the three workers, none holding more than 40%")
    func leastLoadedSpreads() async throws {
        let placed = try await Self.place(.pool("p"), joinOrder: Self.members, run: "pool")
        let load = Self.load(placed)
        #expect(load.count == 3 && load.values.allSatisfy { $0 <= 40 }, "\(load)")
    }

    @Test("hashed: each child has the same worker across 5 cold starts with the workers joining in different orders, none holding more than 40%")
    func hashedOwnersAreStable() async throws {
        var first: [String: String]?
        for run in 0..<5 {
            let rotated: [String] = Array(Self.members.dropFirst(run % 3)) + Array(Self.members.prefix(run % 3))
            let order: [String] = run == 4 ? rotated.reversed() : rotated
            let placed = try await Self.place(.hashed(pool: "p"), joinOrder: order, run: "hashed-\(run)")
            let load = Self.load(placed)
            #expect(load.count == 3 && load.values.allSatisfy { $0 <= 40 }, "run \(run): \(load)")
            if let first {
                let moved = placed.filter { first[$0.key] != $0.value }
                #expect(moved.isEmpty, "run \(run) (joined \(order)): \(moved.count) children on another worker than in run 0")
            } else {
                first = placed
            }
        }
    }
}
