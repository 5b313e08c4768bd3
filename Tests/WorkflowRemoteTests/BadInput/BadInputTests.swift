import Foundation
import Testing
import RemoteTestSupport
import WireProtocol
import Workflow
import WorkflowRemote
import ZeroMQ
import WorkflowClusterTesting

/// Failures are values: bad messages, unknown types, undecodable props and vanished workers give
/// typed errors and log lines, and every runtime keeps serving the rest of the tree.
@Suite struct BadInputTests {
    /// A raw ROUTER socket standing in for a parent, so the test can send a worker anything. It
    /// sends no heartbeats: a worker joined to it that is not about silence is given a liveness
    /// window longer than the test (on a loaded machine two seconds pass between two lines).
    final class RawParent {
        let context: ZMQContext
        private(set) var socket: ZMQSocket
        let endpoint: String
        var workerID: [UInt8] = []

        init(_ name: String) throws {
            context = try ZMQContext()
            socket = try ZMQSocket(.router, context: context)
            try socket.set(.linger, 0)
            try socket.bind(uniqueEndpoint(name))
            endpoint = try socket.lastEndpoint
        }

        deinit {
            socket.close()
        }

        /// Breaks the worker's connection the way a failed network does: this end's socket is
        /// replaced by a new one on the same endpoint, so what was in flight is lost, and the
        /// worker's socket (libzmq) reconnects by itself.
        func breakConnection() throws {
            socket.close()
            socket = try ZMQSocket(.router, context: context)
            try socket.set(.linger, 0)
            try socket.bind(endpoint)
        }

        /// The next envelope from the worker (skipping heartbeats).
        func receive() async throws -> Envelope {
            let deadline = ContinuousClock.now + safetyTimeout
            while let frames = try await socket.nextMultipart(before: deadline) {
                workerID = frames[0]
                let envelope = try Envelope(frames: Array(frames.dropFirst()))
                if envelope.kind != .heartbeat { return envelope }
            }
            throw WaitFailure(description: "no message from the worker within \(safetyTimeout)")
        }

        func send(_ envelope: Envelope) throws {
            try socket.send([workerID] + envelope.encodeFrames())
        }

        func sendRaw(_ frames: [[UInt8]]) throws {
            try socket.send([workerID] + frames)
        }
    }

    @Test func workerAnswersUnknownTypesAndBadPropsWithTypedErrorsAndKeepsServing() async throws {
        let parent = try RawParent("raw-parent")
        let worker = try makeWorker("raw-worker", parent: parent.endpoint, registry: remoteTestRegistry, liveness: 600)
        let codec = BinaryWireCodec()
        #expect(try await parent.receive().kind == .hello)

        // An unknown workflow type.
        try parent.send(Envelope(
            kind: .start, correlationID: 1, sequence: 1, nodePath: "/unknown",
            payloads: [try codec.encode(StartPayloadMirror(typeName: "NoSuchWorkflow")), try codec.encode(CounterWorkflow())]))
        let unknown = try await parent.receive()
        #expect(unknown.kind == .error && unknown.correlationID == 1)
        #expect(try codec.decode(ErrorMirror.self, from: unknown.payloads[0]).code == "unknownType")

        // Props that do not decode as the type.
        try parent.send(Envelope(
            kind: .start, correlationID: 2, sequence: 1, nodePath: "/bad-props",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), [0xFF, 0x00, 0x13]]))
        let badProps = try await parent.receive()
        #expect(badProps.kind == .error && badProps.correlationID == 2)
        #expect(try codec.decode(ErrorMirror.self, from: badProps.payloads[0]).code == "undecodableProps")

        // Frames that are not an envelope at all: dropped with a log line.
        try parent.sendRaw([[0x00, 0x01, 0x02], Array("garbage".utf8)])

        // Still serving: a valid START renders.
        try parent.send(Envelope(
            kind: .start, correlationID: 3, sequence: 1, nodePath: "/good",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow(step: 2))]))
        let rendering = try await parent.receive()
        #expect(rendering.kind == .rendering && rendering.correlationID == 3 && rendering.sequence == 1)
        #expect(worker.workerCounters.started == 1)
        #expect(worker.workerCounters.errors == 2)
        await worker.shutdown()
    }

    @Test func parentReportsATypeNoWorkerHostsAndKeepsRenderingTheRest() async throws {
        let parent = try makeParent("unhosted")
        // This worker hosts only the nested workflow, not the counter.
        let worker = try makeWorker("unhosted-worker", parent: parent.listenEndpoint!, registry: RemotableRegistry().registering(NestedWorkflow.self))
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "remote", step: 1)], placement: .anyWorker), loop: parent)
        let status = try await status(of: parent, pathSuffix: "[remote]") { if case .unavailable = $0 { true } else { false } }
        #expect(status == .unavailable(.noWorker(typeName: CounterWorkflow.workflowTypeName, placement: "anyWorker")))
        #expect(host.rendering["remote"]?.count == -1, "the placeholder stands in")

        // The host keeps serving: a local counter next to it works.
        host.update(workflow: CounterBoardWorkflow(counters: [.init(key: "remote", step: 1)], placement: .local))
        let screen = try await rendering(of: host, "local counter") { $0["remote"]?.count == 0 }
        screen["remote"]!.onIncrement.send(1)
        try await rendering(of: host, "local counter incremented") { $0["remote"]?.count == 1 }

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test func workerThatVanishesGivesUnavailableAndOthersKeepWorking() async throws {
        let parent = try makeParent("vanish", requestTimeout: .seconds(30))
        let doomed = try WorkerProcess(name: "doomed", connect: parent.listenEndpoint!)
        let survivor = try WorkerProcess(name: "survivor", connect: parent.listenEndpoint!)
        defer {
            doomed.kill()
            survivor.stop()
        }
        await parent.waitForWorkers(count: 2)

        let host = WorkflowHost(
            workflow: TwoWorkerBoard(doomedStep: 1, survivorStep: 1), loop: parent)
        let first = try await rendering(of: host, "both counters") { $0.doomed.count == 0 && $0.survivor.count == 0 }

        doomed.kill()
        // Change the doomed child's props mid-run: its worker never answers.
        host.update(workflow: TwoWorkerBoard(doomedStep: 7, survivorStep: 1))
        let status = try await status(of: parent, pathSuffix: "[doomed]") { if case .unavailable = $0 { true } else { false } }
        // Reported as the worker being unreachable, or (once the parent has retried) as no
        // worker of that name being there: either way a typed error naming the worker.
        switch status {
        case .unavailable(.workerUnavailable(let worker, _)): #expect(worker == "doomed")
        case .unavailable(.noWorker(_, let placement)): #expect(placement.contains("doomed"))
        default: Issue.record("expected the doomed child to be unavailable, got \(status)")
        }

        // The survivor keeps working, and the doomed pane keeps its last rendering.
        first.survivor.onIncrement.send(1)
        let later = try await rendering(of: host, "survivor incremented") { $0.survivor.count == 1 }
        #expect(later.doomed.count == 0)
        #expect(parent.statuses.first { $0.key.hasSuffix("[survivor]") }?.value == .running(worker: "survivor"))

        await host.stop()
        await parent.shutdown()
    }
}

/// Two counters pinned to two named workers.
struct TwoWorkerBoard: Workflow, Sendable {
    var doomedStep: Int
    var survivorStep: Int
    typealias State = Void

    struct Screen: Sendable {
        var doomed: CounterScreen
        var survivor: CounterScreen
    }

    func render(state: Void, context: RenderContext<TwoWorkerBoard>) -> Screen {
        Screen(
            doomed: CounterWorkflow(step: doomedStep).remote(on: .worker("doomed")).rendered(in: context, key: "doomed", onOutput: { _, _ in nil }),
            survivor: CounterWorkflow(step: survivorStep).remote(on: .worker("survivor")).rendered(in: context, key: "survivor", onOutput: { _, _ in nil }))
    }
}

/// The START payload as a peer that only knows the documented wire format writes it.
struct StartPayloadMirror: Codable {
    var typeName: String
}

/// The ERROR payload as a peer that only knows the documented wire format reads it.
struct ErrorMirror: Codable {
    var code: String
    var message: String
}
