import Foundation
import RemoteTestSupport
import Synchronization
import Testing
@_spi(WorkflowRuntime) import Workflow
import WorkflowRemote
import WireProtocol
import ZeroMQ
import WorkflowClusterTesting

/// Draining: a worker stopped with SIGTERM hands its children back to the parent with their final
/// state, the parent places them on another worker of their pool and delivers the events it kept
/// meanwhile, and only then does the worker leave. Each event is applied once, each output
/// reaches the parent once, no frame is torn, and the child is never reported unavailable.
@Suite struct DrainTests {
    @Test func drainedChildMovesToAnotherWorkerOfItsPoolWithEveryEventOnce() async throws {
        let parent = try makeParent("drain-pool", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        let workers = try ["drain-a", "drain-b"].map { try WorkerProcess(name: $0, connect: endpoint, pool: "p") }
        defer { for worker in workers { worker.stop() } }
        await parent.waitForWorkers(count: 2)

        let statuses = StatusLog(parent, pathSuffix: "[counter]")
        defer { statuses.stop() }
        // Every frame the host publishes (the listener sees each one): the counter's count and the
        // parent's count of its outputs in step, and never the placeholder.
        let frames = FrameLog<CountedScreen>()
        let host = WorkflowHost(
            workflow: OutputCountingWorkflow(counterPlacement: .pool("p")), loop: parent,
            listener: HostListener(onRendering: { frames.record($0, inStep: $0.isInStep && $0.counter.count >= 0) }, onOutput: { _ in }))
        let outputs = host.outputs
        let screen = try await rendering(of: host, "the counter") { $0.counter.count == 0 }
        guard case .running(let first) = try await status(of: parent, pathSuffix: "[counter]", where: { if case .running = $0 { true } else { false } })
        else { return }
        let second = first == "drain-a" ? "drain-b" : "drain-a"
        let progress = Progress()
        let collector = progress.collect(outputs) { $0 }

        // Events flow all along, at most about 100 in flight: SIGTERM once 300 are applied, and
        // keep sending while the child moves (those wait in the parent) and 300 more after it
        // runs on the other worker.
        let draining = workers[first == "drain-a" ? 0 : 1]
        var sent = 0
        var movedAt: Int?
        while movedAt.map({ sent < $0 + 300 }) ?? true {
            for _ in 0..<10 { #expect(screen.counter.onIncrement.send(1)) }
            sent += 10
            if sent == 300 { draining.process.terminate() }
            if movedAt == nil, sent > 300, statuses.contains(.running(worker: second)) { movedAt = sent }
            let target = sent - 100
            try await eventually("progress to \(target)") { progress.count.load(ordering: .relaxed) >= target }
        }
        let total = sent
        try await eventually("all \(total) outputs") { progress.count.load(ordering: .relaxed) >= total }
        collector.cancel()

        let seen = await collector.value
        #expect(seen == Array(1...total), "every output exactly once, in order, across the move to \(second)")
        let final = try await rendering(of: host, "the final count") { $0.counter.count == total }
        #expect(final.outputsSeen == total, "the parent applied each output once")
        await draining.process.waitForExit()
        #expect(draining.process.terminationReason == .exit && draining.process.terminationStatus == 0)
        try await eventually("the status log to show \(second)") { statuses.contains(.running(worker: second)) }
        let seenStatuses = statuses.all
        #expect(!seenStatuses.contains { if case .unavailable = $0 { true } else { false } }, "reported unavailable: \(seenStatuses)")
        let log = frames.snapshot()
        #expect(log.tornCount == 0, "\(log.tornCount) of \(log.count) frames torn or showing the placeholder, e.g. \(log.torn)")

        await host.stop()
        await parent.shutdown()
    }

    /// Root (this process) → `OutputCountingWorkflow` on a middle worker of pool `mid` → its
    /// counter on a leaf worker of that middle. SIGTERM on the middle while events flow: the
    /// middle answers RELEASE once its leaf acknowledged what it forwarded, so the counter's state
    /// moves inside the middle's snapshot; on the other middle the counter starts on that middle's
    /// leaf. Every level ends with every event once, and no frame is torn.
    @Test func drainedMiddleOfANestedTreeMovesWithItsGrandchild() async throws {
        let parent = try makeParent("drain-nested", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        let middleEndpoints = [uniqueEndpoint("drain-mid-a"), uniqueEndpoint("drain-mid-b")]
        let middles = try zip(["drain-mid-a", "drain-mid-b"], middleEndpoints).map {
            try WorkerProcess(name: $0, connect: endpoint, listen: $1, pool: "mid")
        }
        defer { for middle in middles { middle.stop() } }
        let leaves = try zip(["drain-leaf-a", "drain-leaf-b"], middleEndpoints).map { try WorkerProcess(name: $0, connect: $1) }
        defer { for leaf in leaves { leaf.stop() } }
        await parent.waitForWorkers(count: 2)
        // Each middle has its leaf: a probe renders a nested child on each and waits for their
        // leaves' counters (so the move cannot find the other middle without a leaf yet).
        let probe = WorkflowHost(workflow: MiddlesProbe(middles: ["drain-mid-a", "drain-mid-b"]), loop: parent)
        try await rendering(of: probe, "a leaf under each middle") { $0 == [0, 0] }
        await probe.stop()

        let statuses = StatusLog(parent, pathSuffix: "[middle]")
        defer { statuses.stop() }
        let frames = FrameLog<NestedCountingRoot.Screen>()
        let host = WorkflowHost(
            workflow: NestedCountingRoot(middlePlacement: .pool("mid")), loop: parent,
            listener: HostListener(onRendering: { frames.record($0, inStep: $0.isInStep) }, onOutput: { _ in }))
        _ = try await rendering(of: host, "the leaf's counter") { $0.middle.counter.count == 0 }
        guard case .running(let first) = try await status(of: parent, pathSuffix: "[middle]", where: { if case .running = $0 { true } else { false } })
        else { return }
        let second = first == "drain-mid-a" ? "drain-mid-b" : "drain-mid-a"
        let draining = middles[first == "drain-mid-a" ? 0 : 1]

        // Events flow all along (about 50 in flight at most), through the latest rendering's sink.
        var sent = 0
        var movedAt: Int?
        while movedAt.map({ sent < $0 + 100 }) ?? true {
            let sink = host.rendering.middle.counter.onIncrement
            for _ in 0..<10 { #expect(sink.send(1)) }
            sent += 10
            if sent == 100 { draining.process.terminate() }
            if movedAt == nil, sent > 100, statuses.contains(.running(worker: second)) { movedAt = sent }
            let target = sent - 50
            try await rendering(of: host, "progress to \(target)") { $0.rootSeen >= target }
        }
        let total = sent
        let final = try await rendering(of: host, "every event applied at every level") { $0.rootSeen >= total }
        #expect(final.middle.counter.count == total && final.middle.outputsSeen == total && final.rootSeen == total)
        await draining.process.waitForExit()
        #expect(draining.process.terminationReason == .exit && draining.process.terminationStatus == 0)
        let seenStatuses = statuses.all
        #expect(!seenStatuses.contains { if case .unavailable = $0 { true } else { false } }, "reported unavailable: \(seenStatuses)")
        let log = frames.snapshot()
        #expect(log.tornCount == 0, "\(log.tornCount) of \(log.count) frames out of step, e.g. \(log.torn)")

        await host.stop()
        await parent.shutdown()
    }

    @Test func drainedChildWithNowhereToGoWaitsWithItsStateAndComesBack() async throws {
        let parent = try makeParent("drain-alone", requestTimeout: .seconds(30))
        let endpoint = parent.listenEndpoint!
        let solo = try WorkerProcess(name: "drain-solo", connect: endpoint, pool: "q")
        defer { solo.stop() }
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("q")), loop: parent)
        let outputs = host.outputs
        let collector = Task { () -> [Int] in
            var seen: [Int] = []
            for await output in outputs {
                seen.append(output.count)
                if seen.count == 150 { break }
            }
            return seen
        }
        let screen = try await rendering(of: host, "the counter") { $0["c"]?.count == 0 }["c"]!
        for _ in 0..<100 { #expect(screen.onIncrement.send(1)) }
        try await rendering(of: host, "100 events applied") { $0["c"]?.count == 100 }

        solo.process.terminate()
        let waiting = try await status(of: parent, pathSuffix: "[c]") { if case .unavailable = $0 { true } else { false } }
        #expect(waiting == .unavailable(.workerDrained(worker: "drain-solo", waitingFor: "a worker of pool q")))
        #expect(waiting.description == "unavailable: waiting for a worker of pool q after drain-solo drained; its state is kept")
        await solo.process.waitForExit()
        #expect(solo.process.terminationReason == .exit && solo.process.terminationStatus == 0)
        #expect(host.rendering["c"]?.count == 100, "the last rendering stays shown while the child waits")

        // Events sent while it waits are kept and delivered once a worker of the pool joins.
        for _ in 0..<50 { #expect(screen.onIncrement.send(1)) }
        let next = try WorkerProcess(name: "drain-next", connect: endpoint, pool: "q")
        defer { next.stop() }
        _ = try await status(of: parent, pathSuffix: "[c]") { $0 == .running(worker: "drain-next") }
        try await rendering(of: host, "the state kept and the waiting events applied") { $0["c"]?.count == 150 }
        let seen = try await withSafetyTimeout("150 outputs") { await collector.value }
        #expect(seen == Array(1...150), "every output exactly once, in order")

        await host.stop()
        await parent.shutdown()
    }

    /// A parent that never answers DRAIN (stalled, or gone without a word): the drain ends at its
    /// deadline, saying how many children were not handed over, and the worker can leave.
    @Test func drainEndsAtItsDeadlineWhenTheParentDoesNotAnswer() async throws {
        let parent = try BadInputTests.RawParent("drain-deadline")
        // A long liveness window: the parent's silence must not end the drain (by fencing) first.
        let worker = try makeWorker("drain-stuck", parent: parent.endpoint, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        try parent.send(Envelope(
            kind: .welcome, payloads: [try codec.encode(WelcomeWithDrain(parentName: "raw", heartbeatIntervalMilliseconds: 100, drains: true))]))
        try await eventually("welcomed") { worker.isWelcomed }
        try parent.send(Envelope(
            kind: .start, correlationID: 1, sequence: 1, epoch: 1, nodePath: "/counter",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow())]))
        #expect(try await parent.receive().kind == .rendering)

        let outcome = await worker.drain(deadline: .milliseconds(200))
        #expect(outcome == DrainOutcome(ending: .deadlinePassed, children: 1, handedOver: 0))
        #expect(outcome.notHandedOver == 1)
        #expect(try await parent.receive().kind == .drain)
        await worker.shutdown()
        #expect(try await parent.receive().kind == .goodbye)
    }

    /// Backward safety: a parent whose WELCOME does not offer draining never gets a DRAIN (it
    /// would be an unknown kind to it); the worker leaves as before.
    @Test func workerDoesNotDrainIntoAParentThatPredatesDraining() async throws {
        let parent = try BadInputTests.RawParent("drain-old-parent")
        let worker = try makeWorker("drain-modern", parent: parent.endpoint, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        try parent.send(Envelope(
            kind: .welcome, payloads: [try codec.encode(WelcomeWithDrain(parentName: "old", heartbeatIntervalMilliseconds: 100, drains: nil))]))
        try await eventually("welcomed") { worker.isWelcomed }

        let outcome = await worker.drain(deadline: .seconds(60))
        #expect(outcome.ending == .unsupportedByParent)
        await worker.shutdown()
        #expect(try await parent.receive().kind == .goodbye, "the first message after the HELLO is the GOODBYE: no DRAIN")
    }

    /// RELEASE answered by hand: the final flush says `released` and carries a snapshot with every
    /// event the worker applied, and the copy on the worker is stopped.
    @Test func releaseAnswersWithAFinalFlushAndStopsTheChild() async throws {
        let parent = try BadInputTests.RawParent("drain-release")
        let worker = try makeWorker("drain-released", parent: parent.endpoint, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        try parent.send(Envelope(
            kind: .welcome, payloads: [try codec.encode(WelcomeWithDrain(parentName: "raw", heartbeatIntervalMilliseconds: 100, drains: true))]))
        try await eventually("welcomed") { worker.isWelcomed }
        try parent.send(Envelope(
            kind: .start, correlationID: 7, sequence: 1, epoch: 3, nodePath: "/counter",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow())]))
        #expect(try await parent.receive().kind == .rendering)

        try parent.send(Envelope(kind: .release, correlationID: 7, epoch: 3, nodePath: "/counter"))
        let final = try await parent.receive()
        #expect(final.kind == .outputs && final.correlationID == 7 && final.epoch == 3)
        let info = try codec.decode(ReleasedOutputsMirror.self, from: final.payloads[0])
        #expect(info.released == true)
        #expect(info.snapshot != nil, "the final flush carries the child's state")
        try await eventually("the copy stopped") { worker.workerCounters.stopped == 1 }

        // A RELEASE for a child the worker does not host is answered too, without a snapshot.
        try parent.send(Envelope(kind: .release, correlationID: 8, epoch: 1, nodePath: "/gone"))
        let unknown = try await parent.receive()
        #expect(unknown.kind == .outputs && unknown.correlationID == 8)
        let unknownInfo = try codec.decode(ReleasedOutputsMirror.self, from: unknown.payloads[0])
        #expect(unknownInfo.released == true && unknownInfo.snapshot == nil)
        await worker.shutdown()
    }
}

/// The parent's side of the protocol, message by message, against a hand-driven worker: DRAIN
/// is answered after a RELEASE for each child; meanwhile the worker shows as draining and gets
/// nothing new; a released child with nowhere to go waits with a clear status.
@Suite struct DrainProtocolTests {
    @Test func parentReleasesEachChildThenAnswersAndShowsTheWorkerDraining() async throws {
        // A long liveness window: the hand-driven worker sends no heartbeats.
        var configuration = RemoteRuntimeConfiguration(name: "drain-protocol")
        configuration.listenEndpoint = uniqueEndpoint("drain-protocol")
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 600
        configuration.requestTimeout = .seconds(30)
        let parent = try RemoteRuntime(configuration: configuration)
        let codec = BinaryWireCodec()
        let context = try ZMQContext()
        let worker = try ZMQSocket(.dealer, context: context)
        try worker.set(.linger, 0)
        try worker.connect(parent.listenEndpoint!)
        defer { worker.close() }
        func receive() async throws -> Envelope {
            let deadline = ContinuousClock.now + safetyTimeout
            while true {
                guard let frames = try await worker.nextMultipart(before: deadline) else {
                    throw WaitFailure(description: "nothing from the parent")
                }
                let envelope = try Envelope(frames: frames)
                if envelope.kind != .heartbeat { return envelope }
            }
        }
        struct Hello: Codable {
            var name: String; var pool: String; var hostedTypes: [String]; var capacity: Int; var protocolVersion: Int; var instance: String
        }
        try worker.send(try Envelope(kind: .hello, payloads: [try codec.encode(Hello(
            name: "by-hand", pool: "solo", hostedTypes: [CounterWorkflow.workflowTypeName], capacity: 10, protocolVersion: 4,
            instance: "by-hand-1"))]).encodeFrames())
        let welcome = try await receive()
        #expect(welcome.kind == .welcome)
        #expect(try codec.decode(WelcomeWithDrain.self, from: welcome.payloads[0]).drains == true, "the parent offers draining")

        // The host's first pass waits for the child's rendering, which this test sends: start it
        // beside the test.
        let starting = Task.detached {
            WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("solo")), loop: parent)
        }
        let start = try await receive()
        #expect(start.kind == .start && start.epoch == 1)
        // A counter's screen as the worker encodes it (the empty token is an inert sink).
        struct Screen: Codable { var label: String; var count: Int; var step: Int; var onIncrement: String }
        let screen = Screen(label: "c", count: 7, step: 1, onIncrement: "")
        try worker.send(try Envelope(
            kind: .rendering, correlationID: start.correlationID, sequence: start.sequence, epoch: start.epoch, nodePath: start.nodePath,
            payloads: [try codec.encode(screen)]).encodeFrames())
        let host = await starting.value
        try await rendering(of: host, "the hand-made rendering") { $0["c"]?.count == 7 }

        try worker.send(try Envelope(kind: .drain).encodeFrames())
        let release = try await receive()
        #expect(release.kind == .release && release.correlationID == start.correlationID && release.epoch == start.epoch)
        #expect(try await receive().kind == .drain, "the answer comes after every RELEASE")
        let inspection = await parent.inspect()
        #expect(inspection.workers.map(\.isDraining) == [true])
        #expect(inspection.children.first?.status == .running(worker: "by-hand"), "running until its final flush arrives")

        // The final flush: the child's state, no event applied. Nowhere else to go: it waits.
        let state = TreeSnapshot(workflowType: CounterWorkflow.workflowTypeName, state: Data(#"{"count":7}"#.utf8), children: [])
        let final = ReleasedOutputsPayloadMirror(causes: [], ordinals: [], lengths: [], snapshot: state, continues: false, released: true)
        try worker.send(try Envelope(
            kind: .outputs, correlationID: start.correlationID, epoch: start.epoch, nodePath: start.nodePath,
            payloads: [try codec.encode(final)]).encodeFrames())
        let waiting = try await status(of: parent, pathSuffix: "[c]") { if case .unavailable = $0 { true } else { false } }
        #expect(waiting == .unavailable(.workerDrained(worker: "by-hand", waitingFor: "a worker of pool solo")))
        #expect(host.rendering["c"]?.count == 7, "the last rendering stays shown")
        try worker.send(try Envelope(kind: .goodbye).encodeFrames())

        // A worker of the pool joins: the child starts there from the released snapshot.
        let next = try WorkerProcess(name: "by-hand-next", connect: parent.listenEndpoint!, pool: "solo")
        defer { next.stop() }
        _ = try await status(of: parent, pathSuffix: "[c]") { $0 == .running(worker: "by-hand-next") }
        // The hand-made rendering's sink is inert; the new worker's rendering has a live one (sent
        // to once: an inert sink accepts nothing).
        try await eventually("a rendering from the new worker") { host.rendering["c"]?.onIncrement.send(1) == true }
        try await rendering(of: host, "one more event on the released state") { $0["c"]?.count == 8 }
        await host.stop()
        await parent.shutdown()
    }
}

/// OUTPUTS' first payload as a worker sends it in answer to RELEASE.
struct ReleasedOutputsPayloadMirror: Codable {
    var causes: [UInt64]
    var ordinals: [UInt32]
    var lengths: [UInt32]
    var snapshot: TreeSnapshot?
    var continues: Bool
    var released: Bool?
}

/// A root that renders a `NestedWorkflow` on each named middle worker: each rendering's inner
/// count is 0 once that middle has a leaf worker hosting its counter (-1, the placeholder, before).
struct MiddlesProbe: Workflow, Sendable {
    var middles: [String]
    typealias State = Void

    func render(state: Void, context: RenderContext<MiddlesProbe>) -> [Int] {
        middles.map { NestedWorkflow(step: 1).remote(on: .worker($0)).rendered(in: context, key: $0, onOutput: { _, _ in nil }).counter.count }
    }
}

/// WELCOME as a parent sends it, with the optional `drains` flag.
struct WelcomeWithDrain: Codable {
    var parentName: String
    var heartbeatIntervalMilliseconds: Int
    var drains: Bool?
}

/// The first payload of OUTPUTS, as far as these tests read it.
struct ReleasedOutputsMirror: Codable {
    var snapshot: TreeSnapshot?
    var released: Bool?
}

/// Every status a runtime reported for one child, in order, collected as they happen.
final class StatusLog: Sendable {
    private let statuses = Mutex<[RemoteChildStatus]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ runtime: RemoteRuntime, pathSuffix: String) {
        let changes = runtime.statusChanges
        let started = Task { [weak self] in
            for await change in changes where change.path.hasSuffix(pathSuffix) {
                self?.statuses.withLock { $0.append(change.status) }
            }
        }
        task.withLock { $0 = started }
    }

    var all: [RemoteChildStatus] { statuses.withLock { $0 } }

    func contains(_ status: RemoteChildStatus) -> Bool { all.contains(status) }

    func stop() { task.withLock { $0?.cancel() } }
}
