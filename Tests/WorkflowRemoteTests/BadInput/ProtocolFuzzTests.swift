import Foundation
import Testing
import RemoteTestSupport
import WireProtocol
import Workflow
import WorkflowRemote
import ZeroMQ

/// A bounded protocol-state fuzz: random sequences of valid and invalid messages from raw
/// sockets at a live parent. The parent must answer what it can, drop the rest, and keep serving
/// a real worker and its children throughout.
@Suite struct ProtocolFuzzTests {
    @Test func parentSurvivesRandomMessageSequences() async throws {
        let parent = try makeParent("fuzzed")
        let worker = try makeWorker("honest", parent: parent.listenEndpoint!, registry: remoteTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("honest")), loop: parent)
        let screen = try await rendering(of: host, "counter") { $0["c"]?.count == 0 }["c"]!

        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SplitMix64(seed: seed)
        let context = try ZMQContext()
        var attackers: [ZMQSocket] = []
        for _ in 0..<4 {
            let socket = try ZMQSocket(.dealer, context: context)
            try socket.set(.linger, 0)
            // The parent reads a connection only as fast as it handles it (its receive queue is
            // small), so a send may have to wait for room: bounded, a stuck parent fails the test.
            try socket.set(.sendTimeout, 30_000)
            try socket.connect(parent.listenEndpoint!)
            attackers.append(socket)
        }
        defer { attackers.forEach { $0.close() } }
        let codec = BinaryWireCodec()
        var errorReplies = 0
        // `scripts/fuzz.sh` runs many more rounds; the test suite runs a quick pass.
        let rounds = ProcessInfo.processInfo.environment["WORKFLOW_PROTOCOL_FUZZ_ROUNDS"].flatMap(Int.init) ?? 2_000
        let events = (rounds + 99) / 100
        for round in 0..<rounds {
            let socket = attackers[Int.random(in: 0..<attackers.count, using: &generator)]
            try socket.send(try randomMessage(&generator, codec: codec))
            if round % 100 == 0 {
                // Keep the honest child busy meanwhile: its events must all land.
                screen.onIncrement.send(1)
            }
            while let reply = try socket.receiveMultipart(.dontWait) {
                if let envelope = try? Envelope(frames: reply), envelope.kind == .error { errorReplies += 1 }
            }
        }
        // Replies still on their way (on a loaded machine the parent answers after the last
        // send): wait for them, bounded, before judging the ERROR count.
        let deadline = ContinuousClock.now + .seconds(30)
        while errorReplies == 0 && ContinuousClock.now < deadline {
            for socket in attackers {
                while let reply = try await socket.nextMultipart(within: .milliseconds(200)) {
                    if let envelope = try? Envelope(frames: reply), envelope.kind == .error { errorReplies += 1 }
                }
            }
        }
        try await rendering(of: host, "all \(events) honest events applied (seed \(seed))") { $0["c"]?.count == events }
        print("protocol fuzz: \(rounds) messages, \(errorReplies) error replies, seed \(seed)")
        #expect(parent.workerNames.contains("honest"))
        #expect(errorReplies > 0, "malformed messages are answered with ERROR")

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    /// A random message: garbage frames, a valid envelope of a random kind with random payloads,
    /// a HELLO under a random name, or a message about a child the parent does not know.
    func randomMessage(_ generator: inout SplitMix64, codec: BinaryWireCodec) throws -> [[UInt8]] {
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        switch Int.random(in: 0..<5, using: &generator) {
        case 0:
            return (0..<Int.random(in: 1...4, using: &generator)).map { _ in bytes(Int.random(in: 0...48, using: &generator)) }
        case 1:
            let kind = MessageKind.allCases.randomElement(using: &generator)!
            let payloads = (0..<Int.random(in: 0...3, using: &generator)).map { _ in bytes(Int.random(in: 0...32, using: &generator)) }
            return try Envelope(kind: kind, correlationID: UInt64.random(in: 0...5, using: &generator), payloads: payloads).encodeFrames()
        case 2:
            var header = try Envelope(kind: .rendering).encodeFrames()[0]
            header[Int.random(in: 0..<header.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            return [header, bytes(8)]
        case 3:
            struct Hello: Codable {
                var name: String; var pool: String; var hostedTypes: [String]; var capacity: Int; var protocolVersion: Int; var instance: String
            }
            let hello = Hello(
                name: "intruder-\(Int.random(in: 0..<3, using: &generator))", pool: "default", hostedTypes: [],
                capacity: 1, protocolVersion: Int.random(in: 1...4, using: &generator), instance: "i\(Int.random(in: 0..<2, using: &generator))")
            return try Envelope(kind: .hello, payloads: [try codec.encode(hello)]).encodeFrames()
        default:
            return try Envelope(kind: .outputs, correlationID: 999, acknowledged: 5, payloads: [bytes(4), bytes(4)]).encodeFrames()
        }
    }
}
