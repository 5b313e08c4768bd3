import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WireProtocol
import Workflow
import WorkflowClusterTesting
import ZeroMQ
@testable import WorkflowRemote

/// A draining worker whose connection closes before its RELEASE answer (the final flush) reaches
/// the parent: the handover and the close may arrive in either order, and the child being moved
/// is never shown unavailable. The worker here is a bare DEALER speaking the protocol, so the
/// test decides the order: it asks to drain, reads the RELEASE and leaves without answering.
@Suite struct DrainRaceTests {
    /// Reads messages until one of `kind` arrives (bounded by the safety timeout).
    static func receive(_ kind: MessageKind, on socket: ZMQSocket) throws -> Envelope {
        let deadline = ContinuousClock.now + safetyTimeout
        while ContinuousClock.now < deadline {
            guard let frames = try socket.receiveMultipart(.timeout(.milliseconds(100))) else { continue }
            let envelope = try Envelope(frames: frames)
            if envelope.kind == kind { return envelope }
            if envelope.kind == .batch, let messages = Outbox.split(envelope) {
                for message in messages where (try? Envelope(frames: message))?.kind == kind { return try Envelope(frames: message) }
            }
        }
        throw WaitFailure(description: "no \(kind) within \(safetyTimeout)")
    }

    static func send(_ kind: MessageKind, _ payloads: [[UInt8]] = [], on socket: ZMQSocket) throws {
        try socket.send(try Envelope(header: EnvelopeHeader(kind: kind), payloads: payloads).encodeFrames())
    }

    @Test("a child whose draining worker vanishes before handing it over moves on, never unavailable")
    func vanishingDrainingWorker() async throws {
        // The bare worker sends no heartbeats: the parent must not take its silence for death
        // (a minute of it), but notices its close at its next heartbeat (every 100 ms).
        var parentConfiguration = RemoteRuntimeConfiguration(name: "drain-race")
        parentConfiguration.listenEndpoint = uniqueEndpoint("drain-race")
        parentConfiguration.heartbeatInterval = .milliseconds(100)
        parentConfiguration.heartbeatLiveness = 600
        parentConfiguration.requestTimeout = .seconds(60)
        let parent = try RemoteRuntime(configuration: parentConfiguration)
        // The tree first: its child waits for a worker of pool p (the host does not block on it).
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .pool("p")), loop: parent)
        let context = try ZMQContext()
        let fake = try ZMQSocket(.dealer, context: context)
        try fake.set(.linger, 0)
        try fake.connect(parent.listenEndpoint!)
        let hello = HelloPayload(
            name: "vanishing", pool: "p", hostedTypes: [CounterWorkflow.workflowTypeName], capacity: 10, protocolVersion: 4,
            protocolVersions: [4], instance: "fake", processID: nil, hostName: nil)
        try Self.send(.hello, [try BinaryWireCodec().encode(hello)], on: fake)
        _ = try Self.receive(.start, on: fake)

        // From here on the child is placed: it must never be shown unavailable.
        let unavailable = Mutex(0)
        let changes = parent.statusChanges
        let watcher = Task {
            for await change in changes where change.path.hasSuffix("[c]") {
                if case .unavailable = change.status { unavailable.withLock { $0 += 1 } }
            }
        }
        // Another worker of the pool joins; the fake one drains and leaves at the RELEASE.
        var configuration = RemoteRuntimeConfiguration(name: "staying")
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.pool = "p"
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 50
        let staying = try RemoteRuntime(configuration: configuration)
        try await withSafetyTimeout("both workers joined") { await parent.waitForWorkers(count: 2) }
        try Self.send(.drain, on: fake)
        _ = try Self.receive(.release, on: fake)
        fake.close()

        _ = try await status(of: parent, pathSuffix: "[c]", where: { $0 == .running(worker: "staying") })
        #expect(unavailable.withLock { $0 } == 0, "the child being moved was shown unavailable")
        watcher.cancel()
        await host.stop()
        await staying.shutdown()
        await parent.shutdown()
    }
}
