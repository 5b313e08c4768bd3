import Foundation
import Logging
import RemoteTestSupport
import Testing
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// The loop's timers look at what changed, never at everything held: counted (children and
/// workers looked at per timer check), not timed, with real runtimes over ipc.
@Suite(.serialized) struct PeriodicWorkTests {
    static let members = ["w1", "w2"]

    /// Tens of thousands of children each log their start and stop at `info`: only warnings here.
    static func quietLogger(_ name: String) -> Logger {
        var logger = Logger(label: "workflow.remote.\(name)")
        logger.logLevel = .warning
        return logger
    }

    static func parent(_ name: String) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name, logger: quietLogger(name))
        configuration.listenEndpoint = uniqueEndpoint(name)
        // Generous windows: a loaded machine placing tens of thousands of children must not
        // take a slow worker for a dead one.
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 300
        configuration.requestTimeout = .seconds(120)
        configuration.poolMembers = ["p": members]
        configuration.rebalancing = RebalancePolicy(movesAtOnce: 4, spread: 2)
        return try RemoteRuntime(configuration: configuration)
    }

    static func worker(_ name: String, parent: RemoteRuntime, capacity: Int) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name, logger: quietLogger(name))
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.pool = "p"
        configuration.registry = remoteTestRegistry
        configuration.capacity = capacity
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 300
        return try RemoteRuntime(configuration: configuration)
    }

    /// Reads the timers' counts until `enough` holds, and returns the last counts with the most
    /// any one check looked at meanwhile.
    static func watchTimers(_ runtime: RemoteRuntime, until enough: (PeriodicWork) -> Bool) async throws -> PeriodicWork {
        let deadline = ContinuousClock.now + safetyTimeout
        var most = 0
        while true {
            var work = await runtime.periodicWork()
            most = max(most, work.mostVisitsInOneCheck)
            if enough(work) {
                work.mostVisitsInOneCheck = most
                return work
            }
            guard ContinuousClock.now < deadline else { throw WaitFailure(description: "the timers' counts did not get there: \(work)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test(
        "a timer check looks at the same bounded share with 500 or 50,000 remote children held, and a worker joining is swept a slice per check",
        arguments: [500, 50_000])
    func timersLookAtABoundedShare(children: Int) async throws {
        let parent = try Self.parent("periodic-\(children)")
        var workers = [try Self.worker("w1", parent: parent, capacity: children)]
        await parent.waitForWorkers(count: 1)
        let keys = (0..<children).map { "c\($0)" }
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: keys.map { .init(key: $0, step: 1) }, placement: .hashed(pool: "p")), loop: parent)
        // Tens of thousands of children take a debug build on a loaded machine a while to place:
        // this wait is longer than the others (it is a wait for an outcome, not a timing).
        let placedBy = ContinuousClock.now + safetyTimeout * 4
        while parent.statuses.values.count(where: { if case .running("w1") = $0 { true } else { false } }) < children {
            guard ContinuousClock.now < placedBy else { throw WaitFailure(description: "\(children) children not all running on w1") }
            try await Task.sleep(for: .milliseconds(50))
        }

        // Held, idle: each check looks at the workers, whatever the children.
        let idleFrom = try await Self.watchTimers(parent) { _ in true }
        let idle = try await Self.watchTimers(parent) { $0.checks >= idleFrom.checks + 30 }
        #expect(idle.mostVisitsInOneCheck <= 8, "an idle check looked at \(idle.mostVisitsInOneCheck) children and workers")

        // A worker joins: every hashed child is looked at once, a slice per check.
        workers.append(try Self.worker("w2", parent: parent, capacity: children))
        await parent.waitForWorkers(count: 2)
        let joinedAt = try await Self.watchTimers(parent) { _ in true }
        let swept = try await Self.watchTimers(parent) { $0.visits >= joinedAt.visits + children }
        let bound = RebalanceProgress.sweepSlice + ParentDriver.donorScanPerMove * 4 + 16
        #expect(swept.mostVisitsInOneCheck <= bound, "one check looked at \(swept.mostVisitsInOneCheck) children and workers")
        #expect(swept.checks - joinedAt.checks >= children / bound, "the sweep took \(swept.checks - joinedAt.checks) checks")
        // What the sweep found moves: a child w2 owns runs there.
        let ownedByW2 = parent.statuses.keys.filter { PoolPlacement.ranked(Self.members, for: $0)[0] == "w2" }
        #expect(!ownedByW2.isEmpty)
        try await eventually("a child owned by w2 moved there") {
            let statuses = parent.statuses
            return ownedByW2.contains { statuses[$0] == .running(worker: "w2") }
        }

        await host.stop()
        for worker in workers { await worker.shutdown() }
        await parent.shutdown()
    }
}
