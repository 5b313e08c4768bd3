import Foundation
import RemoteTestSupport
import Testing
import Tracing
import WireProtocol
import Workflow
import WorkflowClusterTesting
import ZeroMQ
@testable import WorkflowRemote

/// A worker played by hand: a bare DEALER socket that speaks the protocol, joined to a parent
/// hosting one remote counter (`[c]`) on pool `p`, and holding that counter's START. For tests
/// that must decide what a worker sends and when (a race, a message lost in transit).
///
/// The parent never takes the bare worker's silence for death (it sends no heartbeats of its
/// own): a minute of it is tolerated, so only what the test sends moves the child.
struct BareWorker {
    let parent: RemoteRuntime
    let host: WorkflowHost<CounterBoardWorkflow>
    let socket: ZMQSocket
    /// The counter's START, as the parent sent it.
    let start: Envelope
    private let context: ZMQContext

    /// Starts the parent (its request deadline `requestTimeout`, its tracer `tracer`) and its
    /// tree, joins it as worker `name` of pool `p` speaking `protocolVersions` and reads the START.
    init(_ name: String, requestTimeout: Duration = .seconds(60), protocolVersions: [Int] = [4], tracer: (any Tracer)? = nil) async throws {
        var configuration = RemoteRuntimeConfiguration(name: "\(name)-parent")
        configuration.tracer = tracer
        configuration.listenEndpoint = uniqueEndpoint(name)
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 600
        configuration.requestTimeout = requestTimeout
        parent = try RemoteRuntime(configuration: configuration)
        // The tree first: its child waits for a worker of pool p (the host does not block on it).
        host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("p")), loop: parent)
        context = try ZMQContext()
        socket = try ZMQSocket(.dealer, context: context)
        try socket.set(.linger, 0)
        try socket.connect(parent.listenEndpoint!)
        let hello = HelloPayload(
            name: name, pool: "p", hostedTypes: [CounterWorkflow.workflowTypeName], capacity: 10, protocolVersion: protocolVersions.max() ?? 4,
            protocolVersions: protocolVersions, instance: "fake", processID: nil, hostName: nil)
        try Self.send(.hello, [try BinaryWireCodec().encode(hello)], on: socket)
        start = try await Self.receive(.start, on: socket)
    }

    /// A real worker of pool `p` joining the same parent, for the child to move to.
    func poolWorker(_ name: String) throws -> RemoteRuntime {
        try makeWorker(name, parent: parent.listenEndpoint!, liveness: 50, pool: "p")
    }

    /// Sends a message of `kind` with `payloads`.
    func send(_ kind: MessageKind, _ payloads: [[UInt8]] = []) throws {
        try Self.send(kind, payloads, on: socket)
    }

    /// Reads messages until one of `kind` arrives (bounded by the safety timeout).
    func receive(_ kind: MessageKind) async throws -> Envelope {
        try await Self.receive(kind, on: socket)
    }

    /// Closes the socket, stops the tree and the parent.
    func finish() async {
        socket.close()
        await host.stop()
        await parent.shutdown()
    }

    /// A parent on its own (its request deadline `requestTimeout`) and a worker played by hand
    /// joined to it as `name` of pool `p`, hosting counters: for tests whose trees (sessions) the
    /// test starts itself.
    static func joinedParent(_ name: String, requestTimeout: Duration) async throws -> (parent: RemoteRuntime, socket: ZMQSocket) {
        var configuration = RemoteRuntimeConfiguration(name: "\(name)-parent")
        configuration.listenEndpoint = uniqueEndpoint(name)
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 600
        configuration.requestTimeout = requestTimeout
        let parent = try RemoteRuntime(configuration: configuration)
        let context = try ZMQContext()
        let socket = try ZMQSocket(.dealer, context: context)
        try socket.set(.linger, 0)
        try socket.connect(parent.listenEndpoint!)
        let hello = HelloPayload(
            name: name, pool: "p", hostedTypes: [CounterWorkflow.workflowTypeName], capacity: 10, protocolVersion: 4,
            protocolVersions: [4], instance: "fake", processID: nil, hostName: nil)
        try send(.hello, [try BinaryWireCodec().encode(hello)], on: socket)
        try await withSafetyTimeout("the hand-played worker joining") { await parent.waitForWorkers(count: 1) }
        return (parent, socket)
    }

    static func receive(_ kind: MessageKind, on socket: ZMQSocket) async throws -> Envelope {
        let deadline = ContinuousClock.now + safetyTimeout
        while let frames = try await socket.nextMultipart(before: deadline) {
            let envelope = try Envelope(frames: frames)
            if envelope.kind == kind { return envelope }
            if envelope.kind == .batch, let messages = Outbox.split(envelope) {
                for message in messages where (try? Envelope(frames: message))?.kind == kind { return try Envelope(frames: message) }
            }
            // A parent of protocol 6 packs them (`packedBatch`) to a worker that speaks 6.
            var carried: Envelope?
            if envelope.kind == .packedBatch, let batch = PackedBatch(envelope) {
                batch.forEachMessage { frames in
                    guard let message = try? Envelope(frames: frames), message.kind == kind else { return true }
                    carried = message
                    return false
                }
            }
            if let carried { return carried }
        }
        throw WaitFailure(description: "no \(kind) within \(safetyTimeout)")
    }

    static func send(_ kind: MessageKind, _ payloads: [[UInt8]] = [], on socket: ZMQSocket) throws {
        try socket.send(try Envelope(header: EnvelopeHeader(kind: kind), payloads: payloads).encodeFrames())
    }
}
