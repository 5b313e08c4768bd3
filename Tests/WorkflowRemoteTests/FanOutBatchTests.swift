import Foundation
import RemoteTestSupport
import Testing
import WireProtocol
import Workflow
import WorkflowClusterTesting
@testable import WorkflowRemote

/// Fan-out as batches, over real ZeroMQ between a real parent and a real worker: a render pass
/// that starts or updates many remote children sends their worker one message (a `packedBatch`,
/// protocol 6), the worker applies every child of it once and answers with one flush, and a
/// worker of the previous protocol still gets what it always got. Counted with the worker's own
/// `WorkerCounters` (ZeroMQ messages each way, children started and updated).
@Suite struct FanOutBatchTests {
    /// A parent speaking `parentVersions` and a worker `name` speaking `versions` whose
    /// heartbeats (a minute apart) never fall between two counts: every message counted is one
    /// the test caused.
    struct Pair {
        let parent: RemoteRuntime
        let worker: RemoteRuntime

        init(
            _ name: String, versions: ClosedRange<Int> = RemoteProtocol.supported, parentVersions: ClosedRange<Int> = RemoteProtocol.supported
        ) async throws {
            var parentConfiguration = RemoteRuntimeConfiguration(name: "\(name)-parent")
            parentConfiguration.protocolVersions = parentVersions
            parentConfiguration.listenEndpoint = uniqueEndpoint(name)
            parentConfiguration.heartbeatInterval = .seconds(60)
            parentConfiguration.logger.logLevel = .warning
            parent = try RemoteRuntime(configuration: parentConfiguration)
            var configuration = RemoteRuntimeConfiguration(name: name)
            configuration.parentEndpoint = parent.listenEndpoint
            configuration.registry = remoteTestRegistry
            configuration.heartbeatInterval = .seconds(60)
            configuration.protocolVersions = versions
            configuration.logger.logLevel = .warning
            worker = try RemoteRuntime(configuration: configuration)
            await parent.waitForWorkers(count: 1)
        }

        func board(_ keys: some Sequence<Int>, step: Int) -> CounterBoardWorkflow {
            CounterBoardWorkflow(counters: keys.map { .init(key: "k\($0)", step: step) }, placement: .worker(worker.name))
        }

        func finish(_ host: WorkflowHost<CounterBoardWorkflow>) async {
            await host.stop()
            await worker.shutdown()
            await parent.shutdown()
        }
    }

    /// The board shows every child of `keys` at `step`.
    static func shows(_ keys: Range<Int>, step: Int) -> @Sendable ([String: CounterScreen]) -> Bool {
        { screens in screens.count == keys.count && keys.allSatisfy { screens["k\($0)"]?.step == step } }
    }

    /// Starts 200 children on `pair`'s worker, then changes all their props in one pass and
    /// waits until the board shows every new props; returns the worker's counters before and
    /// after that pass, and the host (for `Pair.finish`).
    static func changeProps(on pair: Pair) async throws -> (WorkflowHost<CounterBoardWorkflow>, WorkerCounters, WorkerCounters) {
        let children = 0..<200
        let host = WorkflowHost(workflow: pair.board(children, step: 1), loop: pair.parent)
        try await rendering(of: host, "200 children started", where: shows(children, step: 1))
        let before = pair.worker.workerCounters
        host.update(workflow: pair.board(children, step: 2))
        try await rendering(of: host, "200 children with new props", where: shows(children, step: 2))
        return (host, before, pair.worker.workerCounters)
    }

    @Test("a pass that changes 200 children's props sends their worker one message; it applies each once and answers with one")
    func propsChangeIsOneMessageEachWay() async throws {
        let pair = try await Pair("fanout-update")
        let (host, before, after) = try await Self.changeProps(on: pair)
        #expect(after.updated - before.updated == 200, "each child updated once")
        #expect(after.messagesFromParent - before.messagesFromParent == 1, "one batch for the whole pass")
        #expect(after.messagesToParent - before.messagesToParent == 1, "one flush for the whole batch")
        #expect(after.started == before.started && after.errors == 0)
        await pair.finish(host)
    }

    @Test("starting 120 children and updating 100 in one pass is one message each way")
    func mixedStartsAndUpdatesAreOneMessage() async throws {
        let pair = try await Pair("fanout-mixed")
        let host = WorkflowHost(workflow: pair.board(0..<100, step: 1), loop: pair.parent)
        try await rendering(of: host, "100 children started", where: Self.shows(0..<100, step: 1))
        let before = pair.worker.workerCounters

        host.update(workflow: pair.board(0..<220, step: 3))
        try await rendering(of: host, "100 children updated and 120 started", where: Self.shows(0..<220, step: 3))
        let after = pair.worker.workerCounters
        #expect(after.started - before.started == 120)
        #expect(after.updated - before.updated == 100)
        #expect(after.messagesFromParent - before.messagesFromParent == 1)
        #expect(after.messagesToParent - before.messagesToParent == 1)
        await pair.finish(host)
    }

    @Test(
        "a worker or a parent of protocol 5 gets the pass in framed batches of 63 frames, and every child still shows its props",
        arguments: [(worker: 4...5, parent: RemoteProtocol.supported), (worker: RemoteProtocol.supported, parent: 4...5)])
    func previousProtocolStillWorks(worker: ClosedRange<Int>, parent: ClosedRange<Int>) async throws {
        let pair = try await Pair("fanout-v5-\(worker.upperBound)-\(parent.upperBound)", versions: worker, parentVersions: parent)
        let (host, before, after) = try await Self.changeProps(on: pair)
        #expect(after.updated - before.updated == 200)
        // 200 UPDATEs of two frames each, at most 31 to a framed batch.
        #expect(after.messagesFromParent - before.messagesFromParent >= 7, "framed batches, as protocol 5 has them")
        await pair.finish(host)
    }

    @Test("in one packed batch, a START with bad props and one past capacity are refused, typed; the others run and answer in one flush")
    func refusedChildrenDoNotLoseTheOthers() async throws {
        let parent = try BadInputTests.RawParent("fanout-refused")
        var configuration = RemoteRuntimeConfiguration(name: "fanout-refused")
        configuration.parentEndpoint = parent.endpoint
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .seconds(60)
        configuration.capacity = 2
        configuration.logger.logLevel = .critical
        let worker = try RemoteRuntime(configuration: configuration)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)
        try parent.send(Envelope(
            kind: .welcome,
            payloads: [try codec.encode(WelcomePayload(parentName: "raw", heartbeatIntervalMilliseconds: 60_000, protocolVersion: RemoteProtocol.packedBatches))]))
        try await eventually("welcomed") { worker.isWelcomed }

        // Children 1 and 3 start; 2's props do not decode; 4 is past the capacity of 2.
        var outbox = Outbox()
        for id in 1...4 {
            let start = try codec.encode(StartPayload(typeName: CounterWorkflow.workflowTypeName))
            let props = id == 2 ? [0xFF, 0x00, 0x13] : try codec.encode(CounterWorkflow(step: id, label: "c\(id)"))
            try outbox.append(
                EnvelopeHeader(kind: .start, codec: codec.id, correlationID: UInt64(id), sequence: 1, epoch: 1, nodePath: "/c\(id)"),
                payloads: [start, props])
        }
        var sent: [[[UInt8]]] = []
        outbox.send(codec: codec, packing: .packed) { message in
            sent.append(message.frames)
            return true
        }
        #expect(sent.count == 1)
        #expect(try Envelope(frames: sent[0]).kind == .packedBatch)
        try parent.sendRaw(sent[0])

        var errors: [UInt64: String] = [:]
        var rendered: [UInt64] = []
        var flushes = 0
        while errors.count < 2 || rendered.count < 2 {
            let envelope = try await parent.receive()
            let messages: [Envelope]
            switch envelope.kind {
            case .packedBatch:
                flushes += 1
                var carried: [Envelope] = []
                try #require(PackedBatch(envelope)).forEachMessage { frames in
                    carried.append(try! Envelope(frames: frames))
                    return true
                }
                messages = carried
            case .batch: Issue.record("a framed batch to a parent of protocol 6"); return
            default: messages = [envelope]
            }
            for message in messages {
                switch message.kind {
                case .error: errors[message.correlationID] = try codec.decode(ErrorPayload.self, from: message.payloads[0]).code.rawValue
                case .rendering: rendered.append(message.correlationID)
                default: break
                }
            }
        }
        #expect(errors == [2: "undecodableProps", 4: "refused"])
        #expect(rendered == [1, 3], "the others ran, in the batch's order")
        #expect(flushes == 1, "their renderings left in one flush")
        #expect(worker.workerCounters.started == 2)
        await worker.shutdown()
    }
}
