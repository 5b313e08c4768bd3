import Foundation
import Synchronization
import Testing
import RemoteTestSupport
import Workflow
import WorkflowRemote
import WireProtocol
import ZeroMQ
import WorkflowClusterTesting

/// Exactly-once events across worker failures: the parent keeps every event until the worker
/// acknowledges it with a snapshot, restarts the child from that snapshot on the worker that
/// rejoins, replays the rest in order, and drops the outputs the replay emits again.
@Suite struct FailoverTests {
    @Test func tenThousandEventsSurviveFiveKills() async throws {
        let parent = try makeParent("failover", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        var worker = try WorkerProcess(name: "phoenix", connect: endpoint)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("phoenix")), loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        let progress = Progress()
        let collector = progress.collect(outputs, upTo: 10_000) { $0.count }

        // Five kills at random batches (seeded, printed so a failure can be replayed).
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SplitMix64(seed: seed)
        var killBatches = Set<Int>()
        while killBatches.count < 5 { killBatches.insert(Int.random(in: 1..<99, using: &generator)) }
        for batch in 0..<100 {
            for _ in 0..<100 { screen.onIncrement.send(1) }
            if killBatches.contains(batch) {
                // Kill while this batch is being applied: some of its events are done, the rest
                // are on the wire or queued on the worker.
                let target = batch * 100 + Int.random(in: 1...60, using: &generator)
                try await eventually("progress to \(target)") { progress.count.load(ordering: .relaxed) >= target }
                worker.kill()
                worker = try WorkerProcess(name: "phoenix", connect: endpoint)
            }
        }
        defer { worker.stop() }

        let seen = try await withSafetyTimeout("10,000 outputs") { await collector.value }
        #expect(seen == Array(1...10_000), "seed \(seed): every output exactly once, in order")
        let final = try await rendering(of: host, "the final count") { $0["c"]?.count == 10_000 }
        #expect(final["c"]?.count == 10_000)

        await host.stop()
        await parent.shutdown()
    }

    @Test func childOfAKilledWorkerMovesToAnotherWorkerOfItsPool() async throws {
        let parent = try makeParent("pool-failover", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        let workers = try ["pool-a", "pool-b"].map { try WorkerProcess(name: $0, connect: endpoint, pool: "p") }
        defer { for worker in workers { worker.stop() } }
        await parent.waitForWorkers(count: 2)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("p")), loop: parent)
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        guard case .running(let first) = try await status(of: parent, pathSuffix: "[c]", where: { if case .running = $0 { true } else { false } })
        else { return }
        let progress = Progress()
        let collector = progress.collect(outputs, upTo: 2_000) { $0.count }
        for _ in 0..<1_000 { screen.onIncrement.send(1) }
        // Kill the hosting worker part-way: some events are applied and acknowledged, the rest
        // are in flight or queued; the second half is sent while the child has no worker.
        try await eventually("progress to 500") { progress.count.load(ordering: .relaxed) >= 500 }
        workers[first == "pool-a" ? 0 : 1].kill()
        for _ in 0..<1_000 { #expect(screen.onIncrement.send(1)) }

        let second = first == "pool-a" ? "pool-b" : "pool-a"
        _ = try await status(of: parent, pathSuffix: "[c]", where: { $0 == .running(worker: second) })
        let seen = try await withSafetyTimeout("2,000 outputs") { await collector.value }
        #expect(seen == Array(1...2_000), "every output exactly once, in order, across the move to \(second)")
        let final = try await rendering(of: host, "the final count") { $0["c"]?.count == 2_000 }
        #expect(final["c"]?.count == 2_000)

        await host.stop()
        await parent.shutdown()
    }
}

/// How many outputs the collector has seen, for the sender to time its kills.
final class Progress: Sendable {
    let count = Atomic<Int>(0)

    /// Collects `value(output)` for each of `outputs` until `total` arrived or the stream ends,
    /// keeping `count` up to date for the sender.
    func collect<Output: Sendable>(
        _ outputs: AsyncStream<Output>, upTo total: Int = .max, _ value: @escaping @Sendable (Output) -> Int
    ) -> Task<[Int], Never> {
        Task {
            var seen: [Int] = []
            for await output in outputs {
                seen.append(value(output))
                count.store(seen.count, ordering: .relaxed)
                if seen.count == total { break }
            }
            return seen
        }
    }
}


/// Heartbeats both ways: a worker rejoins a parent that restarted (told by RECONNECT), and a
/// worker whose parent goes silent reconnects on a fresh socket.
@Suite struct ReconnectTests {
    /// The worker here would notice a silent parent only after 50 s, so it can only rejoin the
    /// restarted parent in time because its heartbeat is answered with RECONNECT.
    @Test func workerRejoinsARestartedParent() async throws {
        let endpoint = uniqueEndpoint("restart")
        func parent() throws -> RemoteRuntime {
            var configuration = RemoteRuntimeConfiguration(name: "restarting-parent")
            configuration.listenEndpoint = endpoint
            configuration.heartbeatInterval = .milliseconds(50)
            configuration.heartbeatLiveness = 4
            return try RemoteRuntime(configuration: configuration)
        }
        let first = try parent()
        let worker = try makeWorker("loyal", parent: endpoint, heartbeat: .milliseconds(50), liveness: 1_000)
        await first.waitForWorkers(count: 1)
        await first.shutdown()

        let second = try parent()
        try await withSafetyTimeout("the worker rejoins") { await second.waitForWorkers(count: 1) }
        #expect(second.workerNames == ["loyal"])
        try await eventually("welcomed again") { worker.isWelcomed }
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("loyal")), loop: second)
        _ = try await rendering(of: host, "a child on the rejoined worker") { $0["c"]?.count == 0 }

        await host.stop()
        await worker.shutdown()
        await second.shutdown()
    }

    @Test func workerReconnectsOnAFreshSocketWhenItsParentIsSilent() async throws {
        // A parent that takes the HELLO and then says nothing at all.
        let parent = try BadInputTests.RawParent("silent-parent")
        let worker = try makeWorker("abandoned", parent: parent.endpoint, heartbeat: .milliseconds(50), liveness: 4)
        #expect(try await parent.receive().kind == .hello)
        let firstConnection = parent.workerID
        #expect(try await parent.receive().kind == .hello)
        #expect(parent.workerID != firstConnection, "the second HELLO came on the same socket")
        await worker.shutdown()
    }
}

/// RECONNECT, both sides: a parent answers a heartbeat from a peer it does not know with it, and
/// a worker told so stops the children it hosts (the parent no longer counts on them) and says
/// HELLO again.
@Suite struct ReconnectCommandTests {
    @Test func parentAnswersAnUnknownPeersHeartbeatWithReconnect() async throws {
        let parent = try makeParent("unknown-peer")
        let context = try ZMQContext()
        let peer = try ZMQSocket(.dealer, context: context)
        try peer.set(.linger, 0)
        try peer.connect(parent.listenEndpoint!)
        defer { peer.close() }
        try peer.send(try Envelope(kind: .heartbeat).encodeFrames())
        let reply = try #require(try await peer.nextMultipart(), "no answer to the heartbeat")
        #expect(try Envelope(frames: reply).kind == .reconnect)
        #expect(parent.workerNames.isEmpty)
        await parent.shutdown()
    }

    @Test func workerToldToReconnectStopsItsChildrenAndSaysHelloAgain() async throws {
        let parent = try BadInputTests.RawParent("reconnect-worker")
        // The raw parent sends no heartbeats: a long silence window keeps the worker on the
        // socket it joined on, so RECONNECT is the only reason for it to say HELLO again.
        let worker = try makeWorker("told", parent: parent.endpoint, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        struct WelcomeMirror: Codable { var parentName: String; var heartbeatIntervalMilliseconds: Int }
        try parent.send(Envelope(kind: .welcome, payloads: [try codec.encode(WelcomeMirror(parentName: "raw", heartbeatIntervalMilliseconds: 100))]))
        try await eventually("welcomed") { worker.isWelcomed }
        try parent.send(Envelope(
            kind: .start, correlationID: 1, sequence: 1, nodePath: "/counter",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow())]))
        #expect(try await parent.receive().kind == .rendering)
        #expect(worker.workerCounters.started == 1)

        try parent.send(Envelope(kind: .reconnect))
        #expect(try await parent.receive().kind == .hello)
        #expect(worker.workerCounters.stopped == 1, "the child the parent forgot keeps running on the worker")
        await worker.shutdown()
    }
}

/// A parent's tree snapshot carries its remote children's state, so a parent restarted from it
/// (the coordinator's `--restore`) starts each remote child from where it was.
@Suite struct RemoteSnapshotTests {
    @Test func parentSnapshotRestoresRemoteChildState() async throws {
        let parent = try makeParent("snapshot")
        let worker = try makeWorker("snapshot-worker", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)

        let board = CounterBoardWorkflow(counters: [.init(key: "kept", step: 3)])
        let host = WorkflowHost(workflow: board, loop: parent)
        let screen = try await rendering(of: host, "counter") { $0["kept"]?.count == 0 }["kept"]!
        for _ in 0..<5 { screen.onIncrement.send(1) }
        try await rendering(of: host, "five increments") { $0["kept"]?.count == 15 }
        let snapshot = await host.snapshot()
        await host.stop()
        try await eventually("the first child stopped") { worker.workerCounters.stopped == 1 }

        let restored = WorkflowHost(workflow: board, snapshot: snapshot, loop: parent)
        let screenAfter = try await rendering(of: restored, "the restored counter") { $0["kept"].map { $0.count >= 0 } ?? false }
        #expect(screenAfter["kept"]?.count == 15)

        await restored.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}

/// Back-pressure: while a child's worker is away its events are kept for replay, up to a limit;
/// past it the sink refuses (`send` returns `false`) instead of growing memory or dropping
/// silently, and accepts again once the replayed events are acknowledged.
@Suite struct BackPressureTests {
    @Test func sinkRefusesPastTheLimitAndAcceptsAfterReplay() async throws {
        var configuration = RemoteRuntimeConfiguration(name: "pressured")
        configuration.listenEndpoint = uniqueEndpoint("pressured")
        configuration.maxOutstandingEvents = 10
        configuration.heartbeatInterval = .milliseconds(100)
        let parent = try RemoteRuntime(configuration: configuration)
        let first = try makeWorker("first", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        let screen = try await rendering(of: host, "counter") { $0["c"]?.count == 0 }["c"]!
        await first.shutdown()
        _ = try await status(of: parent, pathSuffix: "[c]") { if case .unavailable = $0 { true } else { false } }

        let accepted = (0..<10).map { _ in screen.onIncrement.send(1) }
        #expect(accepted.allSatisfy { $0 }, "up to the limit, events are kept for replay")
        #expect(screen.onIncrement.send(1) == false, "past the limit the sink refuses")

        let second = try makeWorker("second", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        try await rendering(of: host, "the kept events replayed on the new worker") { $0["c"]?.count == 10 }
        try await eventually("acknowledged, so accepted again") { screen.onIncrement.send(1) }
        try await rendering(of: host, "one more") { $0["c"]?.count == 11 }

        await host.stop()
        await second.shutdown()
        await parent.shutdown()
    }
}
