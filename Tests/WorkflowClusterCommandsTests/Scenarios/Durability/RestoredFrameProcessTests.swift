import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowClusterTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a client sees across a coordinator SIGKILL and a restart from its store: real daemons
/// (`durability-test-daemon` as the coordinator with the embedded SQLite store and as the worker
/// hosting the remote ledger), real HTTP and WebSocket.
@Suite("The last frame across a coordinator restart", .serialized)
struct RestoredFrameProcessTests {
    typealias Ledgers = DurableAcceptanceProcessTests.Ledgers

    /// A rendering line the coordinator printed (`--print-renderings json`).
    struct PrintedRendering: Decodable {
        var event: String
        var sequence: UInt64
        var rendering: Ledgers
    }

    /// A status line the coordinator printed.
    struct PrintedStatus: Decodable {
        var event: String
        var path: String
        var status: String
    }

    static let port = 47_210

    static func printedRendering(_ line: String) -> PrintedRendering? {
        guard line.contains(#""event":"rendering""#) else { return nil }
        return try? JSONDecoder().decode(PrintedRendering.self, from: Data(line.utf8))
    }

    static func printedStatus(_ line: String) -> PrintedStatus? {
        guard line.contains(#""event":"status""#) else { return nil }
        return try? JSONDecoder().decode(PrintedStatus.self, from: Data(line.utf8))
    }

    /// Posts `id` to `token` and expects it accepted.
    static func send(_ id: Int, to token: String, on gateway: GatewayClient) async throws {
        let answer = try await gateway.post(DurableAcceptanceProcessTests.path(for: token), json: "\(id)")
        #expect(answer.status == 202, "id \(id): \(answer.status) \(answer.text)")
    }

    /// The first rendering on `gateway`'s stream satisfying `predicate`, with its sequence.
    static func streamed(
        _ what: String, on gateway: GatewayClient, where predicate: @escaping @Sendable (StreamedRendering<Ledgers>) -> Bool
    ) async throws -> StreamedRendering<Ledgers> {
        try await withSafetyTimeout(what) {
            let found = Found()
            try await gateway.stream { text in
                let message = try DurableAcceptanceProcessTests.decode(Data(text.utf8))
                guard predicate(message) else { return false }
                found.set(message)
                return true
            }
            return try #require(found.value, "the stream ended before \(what)")
        }
    }

    @Test("after a SIGKILL and a restart from the store, the first frame is the last one before; a click on it is applied once")
    func firstFrameAfterRestartIsTheLast() async throws {
        try await ClusterFixture.with("restored-frame") { cluster in
            try DurableAcceptanceProcessTests.writeConfig(cluster, port: Self.port)
            let worker = try cluster.start(
                "durability-test-daemon", ["--config", cluster.configPath, "--name", "w1"], label: "w1",
                environment: ["DURABILITY_TEST_ROLE": "worker"])
            let arguments = ["--config", cluster.configPath, "--print-renderings", "json"]
            let coordinator = try cluster.start("durability-test-daemon", arguments, label: "coordinator")
            let gateway = try await GatewayClient.of(coordinator)
            let ready = try await Self.streamed("both ledgers rendered", on: gateway) {
                $0.rendering.record != nil && $0.rendering.remote.available && $0.rendering.remote.record != nil
            }.rendering
            let remoteToken = try #require(ready.remote.record)
            for id in 1...3 { try await Self.send(id, to: remoteToken, on: gateway) }
            try await Self.send(11, to: try #require(ready.record), on: gateway)
            let shown = try await Self.streamed("every event shown", on: gateway) {
                $0.rendering.ids == [11] && $0.rendering.remote.ids == [1, 2, 3]
            }
            // A sink keeps its token while it is rendered at the same place.
            #expect(shown.rendering.remote.record == remoteToken, "the remote sink's token changed while it was rendered")
            #expect(shown.rendering.record == ready.record, "the root sink's token changed while it was rendered")
            let last = try DurableAcceptanceProcessTests.decode(try await gateway.get("/api/rendering").body)
            #expect(last.rendering.remote.ids == [1, 2, 3] && last.rendering.ids == [11])

            // The worker is frozen, so the restarted coordinator serves its restored frame for as
            // long as the test looks at it (as after a restart before the workers rejoined).
            kill(worker.pid, SIGSTOP)
            defer { kill(worker.pid, SIGCONT) }
            coordinator.forceKill()
            _ = try await coordinator.waitForExit()

            let restarted = try cluster.start("durability-test-daemon", arguments, label: "coordinator")
            let firstLine = try await restarted.stdout.first("the first rendering after the restart") { Self.printedRendering($0) != nil }
            let first = try #require(Self.printedRendering(firstLine))
            // The last frame again, not the remote child's placeholder (available false, no ids,
            // a null sink); only the root's own sink has a new token (a new run of the root).
            #expect(first.rendering.remote.available, "the first frame shows the remote child's placeholder: \(firstLine)")
            #expect(first.rendering.remote.ids == last.rendering.remote.ids, "\(firstLine)")
            #expect(first.rendering.ids == last.rendering.ids, "\(firstLine)")
            #expect(first.rendering.remote.record == last.rendering.remote.record, "the remote sink's token changed across the restart")
            #expect(first.sequence > last.sequence, "sequence went back: \(first.sequence) after \(last.sequence)")
            let restartedGateway = try await GatewayClient.of(restarted)
            let served = try DurableAcceptanceProcessTests.decode(try await restartedGateway.get("/api/rendering").body)
            #expect(served.rendering.remote.ids == [1, 2, 3] && served.rendering.ids == [11] && served.rendering.remote.available)
            #expect(served.sequence > last.sequence, "/api/rendering's sequence went back: \(served.sequence) after \(last.sequence)")
            let streamedFirst = try await Self.streamed("the stream's first rendering", on: restartedGateway) { _ in true }
            #expect(streamedFirst.rendering.remote.ids == [1, 2, 3] && streamedFirst.rendering.remote.available)
            #expect(streamedFirst.sequence > last.sequence, "the stream's sequence went back: \(streamedFirst.sequence) after \(last.sequence)")

            let tree = try JSONDecoder().decode(TreeJSON.self, from: try await restartedGateway.get("/api/tree").body)
            let remoteNode = try #require(tree.nodes.first { $0.path.contains("EventLedger") }, "no remote child in /api/tree")
            #expect(remoteNode.status == "reconnecting" && remoteNode.detail == "showing its last rendering", "/api/tree: \(remoteNode)")

            // A click with the token the client held from before the kill: accepted while the
            // child cannot run, kept, and applied exactly once when its worker is back.
            try await Self.send(4, to: remoteToken, on: restartedGateway)
            kill(worker.pid, SIGCONT)
            let clicked = try await Self.streamed("the click applied", on: restartedGateway) { $0.rendering.remote.ids.contains(4) }
            #expect(clicked.rendering.remote.ids == [1, 2, 3, 4])
            #expect(clicked.sequence > served.sequence)
            // The remote child said it was reconnecting until it ran again.
            let statuses = restarted.stdout.lines.compactMap(Self.printedStatus).filter { $0.path.contains("EventLedger") }.map(\.status)
            #expect(statuses.first == "reconnecting", "statuses printed: \(statuses)")
            #expect(statuses.contains("running"), "statuses printed: \(statuses)")
            // Nothing applied late or twice: one more click makes exactly five.
            try await Self.send(5, to: try #require(clicked.rendering.remote.record), on: restartedGateway)
            let more = try await Self.streamed("one more click", on: restartedGateway) { $0.rendering.remote.ids.contains(5) }
            #expect(more.rendering.remote.ids == [1, 2, 3, 4, 5])
        }
    }
}

/// The message a stream reader kept, for the task that waits on the stream.
private final class Found: Sendable {
    private let latest = Mutex<StreamedRendering<RestoredFrameProcessTests.Ledgers>?>(nil)

    func set(_ message: StreamedRendering<RestoredFrameProcessTests.Ledgers>) { latest.withLock { $0 = message } }

    var value: StreamedRendering<RestoredFrameProcessTests.Ledgers>? { latest.withLock { $0 } }
}
