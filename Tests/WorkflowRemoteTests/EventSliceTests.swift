import Synchronization
import Testing
import RemoteTestSupport
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// A worker ends a slice of its parent's messages after `WorkerDriver.eventsPerSlice` events and
/// flushes their outputs, so the parent applies one flush while the worker applies the next
/// events, instead of the two processes taking turns over a whole burst. A slice may end in the
/// middle of a message's events or between two messages; neither may change what is applied.
@Suite struct EventSliceTests {
    /// Counts the actions that apply a worker's flush with outputs on the remote child's node
    /// (the parent applies each flush as one action).
    final class FlushCounter: WorkflowObserver {
        let flushes = Mutex(0)

        func actionWasApplied(action: String, path: String, producedOutput: Bool) {
            if producedOutput, path.contains("Remote<") { flushes.withLock { $0 += 1 } }
        }
    }

    /// A burst of `count` events queued while the worker is stopped (SIGSTOP), so that it finds
    /// them all waiting when it resumes: many more than one slice. Returns once every event was
    /// handed to the worker's socket (the parent has recorded `sentInAll` since the child started).
    static func queueBacklog(
        of count: Int, sentInAll: Int, on worker: WorkerProcess, through screen: CounterScreen, parent: RemoteRuntime
    ) async throws {
        worker.suspend()
        try await eventually("the worker stopped") { worker.isSuspended }
        for _ in 0..<count { #expect(screen.onIncrement.send(1)) }
        // The parent records and sends an event in the same loop iteration: once it counts them
        // all, they are on their way to the stopped worker.
        try await withSafetyTimeout("\(sentInAll) events sent") {
            while await parent.inspect().children.map(\.eventsSent).reduce(0, +) < UInt64(sentInAll) {
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        worker.resume()
    }

    /// 1,000 events waiting at once are applied in slices: each exactly once and in order (the
    /// outputs count 1…1,000 with no gap and no repeat), all their outputs reach the parent, and
    /// the final rendering shows every event. A slice holds at most 255 + 64 events (it ends once
    /// 256 were read, and a message holds up to 64), so the parent applies at least four
    /// flushes; with one slice for the whole backlog it applies one or two.
    @Test func aBacklogIsAppliedInSlicesEachEventOnceInOrder() async throws {
        let parent = try makeParent("event-slices")
        let worker = try WorkerProcess(name: "slices", connect: parent.listenEndpoint!)
        defer { worker.kill() }
        await parent.waitForWorkers(count: 1)

        let counter = FlushCounter()
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("slices")),
            observers: [counter], loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        let total = 1_000
        #expect(total > 3 * (WorkerDriver.eventsPerSlice + PackedValues.maxEventsPerMessage))
        try await Self.queueBacklog(of: total, sentInAll: total, on: worker, through: screen, parent: parent)

        let seen = try await withSafetyTimeout("\(total) outputs") { () -> [Int] in
            var seen: [Int] = []
            for await output in outputs {
                seen.append(output.count)
                if seen.count == total { break }
            }
            return seen
        }
        #expect(seen == Array(1...total), "every event applied once, in order")
        let final = try await rendering(of: host, "the final count") { $0["c"]?.count == total }
        #expect(final["c"]?.count == total)
        let flushes = counter.flushes.withLock { $0 }
        #expect(flushes >= 4, "\(total) waiting events in \(flushes) flushes")
        try await withSafetyTimeout("every event acknowledged") {
            while await parent.inspect().children.first?.eventsAcknowledged != UInt64(total) {
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        await host.stop()
        await parent.shutdown()
    }

    /// A worker killed while it works through a backlog in slices, three times over: each
    /// replacement gets the unacknowledged events again, in batches that start where the last
    /// acknowledged flush left off, not where the dead worker's slices or the parent's messages
    /// began, and possibly after the parent received only the first chunks of a flush (a slice's
    /// flush spans several messages). Every output still arrives exactly once, in order.
    @Test func aWorkerKilledMidBacklogLosesAndRepeatsNothing() async throws {
        let parent = try makeParent("slice-replay", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        var worker = try WorkerProcess(name: "slice-replay", connect: endpoint)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("slice-replay")),
            loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        let (rounds, perRound) = (3, 1_000)
        let total = rounds * perRound
        let progress = Progress()
        let collector = progress.collect(outputs, upTo: total) { $0.count }

        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SplitMix64(seed: seed)
        var kills: [Int] = []
        for round in 0..<rounds {
            let base = round * perRound
            try await Self.queueBacklog(of: perRound, sentInAll: base + perRound, on: worker, through: screen, parent: parent)
            // Past the round's first slice, never on a slice or message boundary.
            var target = base + Int.random(in: (WorkerDriver.eventsPerSlice + 1)...(perRound / 2), using: &generator)
            while target % WorkerDriver.eventsPerSlice == 0 || target % PackedValues.maxEventsPerMessage == 0 { target += 1 }
            let goal = target
            kills.append(goal)
            try await eventually("progress to \(goal)") { progress.count.load(ordering: .relaxed) >= goal }
            worker.kill()
            worker = try WorkerProcess(name: "slice-replay", connect: endpoint)
        }
        defer { worker.kill() }

        // If the outputs never all arrive, the collector is cancelled and what it saw is checked.
        do {
            try await eventually("\(total) outputs") { progress.count.load(ordering: .relaxed) >= total }
        } catch {
            collector.cancel()
        }
        let seen = await collector.value
        #expect(seen == Array(1...total), "seed \(seed), killed after \(kills): every output exactly once, in order")
        let final = try await rendering(of: host, "the final count") { $0["c"]?.count == total }
        #expect(final["c"]?.count == total)

        await host.stop()
        await parent.shutdown()
    }
}
