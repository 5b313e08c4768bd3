import Logging
import Synchronization
import Testing
import RemoteTestSupport
import Workflow
import WorkflowRemote
import ZeroMQ

/// CURVE between parent and workers: only listed worker keys join, a worker that does not know
/// the parent's real key fails the handshake, secrets never reach the log, and plaintext on a
/// network address is refused unless forced.
@Suite struct TransportSecurityTests {
    struct Keys {
        let server = try! CurveKeyPair.generate()
        let allowed = try! CurveKeyPair.generate()
        let stranger = try! CurveKeyPair.generate()
    }

    func makeParent(_ keys: Keys, logger: Logger) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: "secure-parent", logger: logger)
        configuration.listenEndpoint = "tcp://127.0.0.1:*"
        configuration.listenSecurity = .curve(keyPair: keys.server, allowedClientKeys: [keys.allowed.publicKey])
        configuration.heartbeatInterval = .milliseconds(100)
        return try RemoteRuntime(configuration: configuration)
    }

    func makeWorker(_ name: String, keyPair: CurveKeyPair, serverKey: CurveKey, parent: String, logger: Logger) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name, logger: logger)
        configuration.parentEndpoint = parent
        configuration.parentSecurity = .curve(keyPair: keyPair, serverKey: serverKey)
        configuration.registry = remoteTestRegistry
        configuration.heartbeatInterval = .milliseconds(100)
        return try RemoteRuntime(configuration: configuration)
    }

    @Test func listedWorkerJoinsAndServesOverCurve() async throws {
        let keys = Keys()
        let log = CapturedLog()
        let parent = try makeParent(keys, logger: log.logger("parent"))
        let worker = try makeWorker("listed", keyPair: keys.allowed, serverKey: keys.server.publicKey, parent: parent.listenEndpoint!, logger: log.logger("listed"))
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        let screen = try await rendering(of: host, "counter over CURVE") { $0["c"]?.count == 0 }["c"]!
        screen.onIncrement.send(1)
        try await rendering(of: host, "incremented") { $0["c"]?.count == 1 }

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
        for secret in [keys.server.secretKey, keys.allowed.secretKey] {
            #expect(!log.text.contains(secret.z85), "a secret key reached the log")
        }
    }

    @Test func unlistedWorkerCannotJoin() async throws {
        let keys = Keys()
        let log = CapturedLog()
        let parent = try makeParent(keys, logger: log.logger("parent"))
        let stranger = try makeWorker("stranger", keyPair: keys.stranger, serverKey: keys.server.publicKey, parent: parent.listenEndpoint!, logger: log.logger("stranger"))

        try await eventually("the stranger is refused") { parent.workerCounters.refusedPeers >= 1 }
        #expect(parent.workerNames.isEmpty)
        #expect(!stranger.isWelcomed)
        // With no worker admitted, a remote child cannot be placed: it gets no props.
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        let status = try await status(of: parent, pathSuffix: "[c]") { if case .unavailable = $0 { true } else { false } }
        #expect(status == .unavailable(.noWorker(typeName: CounterWorkflow.workflowTypeName, placement: "anyWorker")))
        #expect(stranger.workerCounters.started == 0)
        #expect(log.text.contains(keys.stranger.publicKey.z85), "the refused public key is logged for the operator")

        await host.stop()
        await stranger.shutdown()
        await parent.shutdown()
    }

    @Test func wrongServerKeyFailsTheHandshake() async throws {
        let keys = Keys()
        let log = CapturedLog()
        let parent = try makeParent(keys, logger: log.logger("parent"))
        let impostorKey = try CurveKeyPair.generate().publicKey
        let worker = try makeWorker("misled", keyPair: keys.allowed, serverKey: impostorKey, parent: parent.listenEndpoint!, logger: log.logger("misled"))

        try await eventually("the handshake fails") { parent.workerCounters.refusedPeers >= 1 }
        #expect(parent.workerNames.isEmpty)
        #expect(!worker.isWelcomed)

        await worker.shutdown()
        await parent.shutdown()
    }

    @Test func plaintextOnANetworkAddressIsRefusedUnlessForced() throws {
        var configuration = RemoteRuntimeConfiguration(name: "exposed")
        configuration.listenEndpoint = "tcp://0.0.0.0:*"
        #expect(throws: RemoteRuntimeError.self) { try RemoteRuntime(configuration: configuration) }
        configuration.allowPlaintextOnNetwork = true
        let runtime = try RemoteRuntime(configuration: configuration)
        #expect(runtime.listenEndpoint != nil)
    }
}

/// Collects every log line of the runtimes under test, to check what reaches the log.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    func logger(_ label: String) -> Logger {
        Logger(label: label) { _ in CapturingHandler(log: self) }
    }

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }
}

struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append("\(event.level) \(event.message) \(event.metadata ?? [:])")
    }
}
