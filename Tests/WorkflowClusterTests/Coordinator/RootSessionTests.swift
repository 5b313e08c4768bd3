import Foundation
import Logging
import RemoteTestSupport
import Testing
import Workflow
import WorkflowCluster
import WorkflowRemote
import WorkflowClusterTesting

/// `WorkflowRootSession`: any root with an `Encodable` rendering, served as JSON with sinks as
/// tokens, and events sent to those tokens.
@Suite("Generic root session")
struct RootSessionTests {
    /// Waits for a JSON rendering of `session` that decodes as `T` and satisfies `predicate`.
    @discardableResult
    static func rendering<T: Decodable & Sendable>(
        of session: any ClusterRootSession, as type: T.Type, _ what: String, where predicate: @escaping @Sendable (T) -> Bool
    ) async throws -> T {
        try await withSafetyTimeout(what) {
            for await rendering in session.renderings() {
                if let value = try? JSONDecoder().decode(T.self, from: rendering.json), predicate(value) { return value }
            }
            throw WaitFailure(description: "renderings ended before \(what)")
        }
    }

    @Test("a token of an earlier run of the tree answers restarted, a token of no shape unknown")
    func tokenOfEarlierRun() async throws {
        let earlier = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let old = try JSONDecoder().decode(TallyJSON.self, from: earlier.latestRendering.json).add
        await earlier.stop()
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        await #expect(throws: RootEventError.restartedToken(old)) { try await session.send(event: Data("1".utf8), to: old) }
        await #expect(throws: RootEventError.unknownToken("no-such-token")) { try await session.send(event: Data("1".utf8), to: "no-such-token") }
        let current = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await session.send(event: Data("1".utf8), to: current)
        await session.stop()
    }

    @Test("the first rendering is JSON at once, sinks as token strings, a closure sink as null")
    func firstRenderingIsJSON() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let latest = session.latestRendering
        #expect(latest.sequence == 1)
        let tally = try JSONDecoder().decode(TallyJSON.self, from: latest.json)
        #expect(tally.count == 0)
        #expect(!tally.add.isEmpty)
        #expect(tally.undo == nil)
        let object = try #require(try JSONSerialization.jsonObject(with: latest.json) as? [String: Any])
        #expect(object["inert"] is NSNull, "a sink nothing routes to is null: \(String(decoding: latest.json, as: UTF8.self))")
        await session.stop()
    }

    @Test("an event sent to a token changes the state; the next renderings show it")
    func eventByToken() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let first = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)
        try await session.send(event: Data("3".utf8), to: first.add)
        let three = try await Self.rendering(of: session, as: TallyJSON.self, "count 3") { $0.count == 3 }
        #expect(three.add == first.add, "a sink rendered at the same place keeps its token")
        #expect(session.latestRendering.sequence > 1)
        // The token read from the first rendering still delivers, to the latest pass's sink.
        try await session.send(event: Data("2".utf8), to: first.add)
        try await Self.rendering(of: session, as: TallyJSON.self, "count 5") { $0.count == 5 }
        let undo = try #require(three.undo)
        try await session.send(event: Data("{}".utf8), to: undo)
        try await Self.rendering(of: session, as: TallyJSON.self, "count 4") { $0.count == 4 }
        await session.stop()
    }

    @Test("a reader that does not keep up skips renderings (newest wins) instead of queueing them")
    func slowReaderGetsTheNewest() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let first = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)
        var slow = session.renderings().makeAsyncIterator()
        // 50 settled renderings while the slow reader reads nothing.
        for count in 1...50 {
            try await session.send(event: Data("1".utf8), to: first.add)
            try await Self.rendering(of: session, as: TallyJSON.self, "count \(count)") { $0.count == count }
        }
        let last = session.latestRendering.sequence
        #expect(last > 50)
        var received: [UInt64] = []
        while let rendering = await slow.next() {
            received.append(rendering.sequence)
            if rendering.sequence == last { break }
        }
        // A queue would hold all 50; a buffer of one holds the newest (and at most one that was
        // being handed over while the reader looked).
        #expect(received.last == last && received.count <= 2, "\(received)")
        await session.stop()
    }

    @Test("a token whose sink the current rendering no longer renders is stale, and nothing is applied")
    func goneSinkIsStale() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let first = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)
        try await session.send(event: Data("1".utf8), to: first.add)
        let one = try await Self.rendering(of: session, as: TallyJSON.self, "count 1") { $0.count == 1 }
        let undo = try #require(one.undo)
        try await session.send(event: Data("{}".utf8), to: undo)
        let zero = try await Self.rendering(of: session, as: TallyJSON.self, "count 0") { $0.count == 0 && $0.undo == nil }
        // The undo button is gone from the screen: its token no longer acts, and says why.
        await #expect(throws: RootEventError.staleToken(undo)) { try await session.send(event: Data("{}".utf8), to: undo) }
        #expect(RootEventError.staleToken(undo).description.hasSuffix("this sink is no longer rendered: read the rendering again"))
        try await session.send(event: Data("2".utf8), to: zero.add)
        let two = try await Self.rendering(of: session, as: TallyJSON.self, "count 2") { $0.count == 2 }
        // Rendered again at the same place, the undo button has its old token again.
        #expect(two.undo == undo)
        try await session.send(event: Data("{}".utf8), to: undo)
        try await Self.rendering(of: session, as: TallyJSON.self, "count 1") { $0.count == 1 }
        await session.stop()
    }

    @Test("unknown, stale and undecodable sends are distinct typed errors; nothing is applied")
    func typedErrors() async throws {
        // Keeps one retired token usable (its sink no longer rendered, it is stale all the same).
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow(), retainedTokens: 1)
        let first = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)

        await #expect(throws: RootEventError.unknownToken("no-such-token")) { try await session.send(event: Data("1".utf8), to: "no-such-token") }
        await #expect {
            try await session.send(event: Data(#""three""#.utf8), to: first.add)
        } throws: { error in
            guard case .undecodableEvent(let token, let reason) = error as? RootEventError else { return false }
            return token == first.add && reason.contains("Int")
        }
        await #expect {
            try await session.send(event: Data("{not json".utf8), to: first.add)
        } throws: { error in
            if case .undecodableEvent = error as? RootEventError { true } else { false }
        }

        // A token of a sink no longer rendered is stale: the undo button of count 1, gone at 0.
        try await session.send(event: Data("1".utf8), to: first.add)
        let one = try await Self.rendering(of: session, as: TallyJSON.self, "count 1") { $0.count == 1 }
        let undo = try #require(one.undo)
        try await session.send(event: Data("{}".utf8), to: undo)
        try await Self.rendering(of: session, as: TallyJSON.self, "count 0 again") { $0.count == 0 }
        await #expect(throws: RootEventError.staleToken(undo)) { try await session.send(event: Data("{}".utf8), to: undo) }

        // None of the failed sends was applied: one more add of 5 shows exactly 5.
        let latest = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)
        try await session.send(event: Data("5".utf8), to: latest.add)
        try await Self.rendering(of: session, as: TallyJSON.self, "count 5") { $0.count == 5 }
        await session.stop()
    }

    @Test("a remote child's sink refusing for back-pressure is reported as refused")
    func refusedForBackPressure() async throws {
        var quiet = Logger(label: "test.session")
        quiet.logLevel = .critical
        var parentConfiguration = RemoteRuntimeConfiguration(name: "session-parent", logger: quiet)
        parentConfiguration.listenEndpoint = "ipc:///tmp/wf-session-\(getpid())-\(UUID().uuidString.prefix(8))"
        parentConfiguration.maxOutstandingEvents = 2
        parentConfiguration.heartbeatInterval = .milliseconds(100)
        let parent = try RemoteRuntime(configuration: parentConfiguration)
        var workerConfiguration = RemoteRuntimeConfiguration(name: "session-worker", logger: quiet)
        workerConfiguration.parentEndpoint = parent.listenEndpoint
        workerConfiguration.registry = RemotableRegistry().registering(CounterWorkflow.self)
        workerConfiguration.heartbeatInterval = .milliseconds(100)
        let worker = try RemoteRuntime(configuration: workerConfiguration)
        await parent.waitForWorkers(count: 1)

        struct Board: Decodable, Sendable {
            struct Counter: Decodable, Sendable {
                var count: Int
                var onIncrement: String?
            }
            var c: Counter
        }
        let session = WorkflowRootSession(name: "board", workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)]), loop: parent)
        let board = try await Self.rendering(of: session, as: Board.self, "the worker's rendering") { $0.c.count == 0 }
        let token = try #require(board.c.onIncrement, "the remote child's sink has a token")
        let changes = parent.statusChanges
        await worker.shutdown()
        try await withSafetyTimeout("the child unavailable") {
            for await change in changes {
                if case .unavailable = change.status { return }
            }
        }
        // Kept for replay up to the limit, then refused.
        try await session.send(event: Data("1".utf8), to: token)
        try await session.send(event: Data("1".utf8), to: token)
        await #expect(throws: RootEventError.refused(token: token)) { try await session.send(event: Data("1".utf8), to: token) }
        await session.stop()
        await parent.shutdown()
    }
}
