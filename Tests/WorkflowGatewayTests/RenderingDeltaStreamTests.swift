import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import NIOCore
import RemoteTestSupport
import Synchronization
import Testing
import WorkflowCluster
@testable import WorkflowGateway
import WorkflowClusterTesting

/// The rendering stream with deltas (`?deltas=1`), over a real server and real WebSocket
/// clients: what a client is sent, the window of unacknowledged messages, resuming, refusals,
/// and conditional reads.
@Suite("Rendering deltas on the stream")
struct RenderingDeltaStreamTests {
    /// A client of the stream's side: what it applied from each message (as the client library
    /// does, in Swift).
    struct Applied {
        var sequence: UInt64 = 0
        var rendering: JSONValue = .null
        var whole = 0
        var deltas = 0
        var speaksDeltas = false
        var run = ""
        /// The window the whole frame said (0: none).
        var window = 0

        /// Applies one message; returns its sequence.
        mutating func apply(_ message: WebSocketMessage) throws -> UInt64 {
            guard case .text(let text) = message, case .object(let object) = try #require(JSONValue(json: Data(text.utf8))) else {
                throw JSONDeltaError("not a JSON object: \(message)")
            }
            guard case .integer(let sequence)? = object["sequence"] else { throw JSONDeltaError("no sequence in \(text)") }
            if let ops = object["ops"] {
                guard case .integer(let from)? = object["from"], UInt64(from) == self.sequence else {
                    throw JSONDeltaError("changes from \(object["from"].map(\.bytesText) ?? "nothing") to a client at \(self.sequence)")
                }
                rendering = try JSONDelta(wire: ops).applied(to: rendering)
                deltas += 1
            } else {
                rendering = try #require(object["rendering"])
                speaksDeltas = object["deltas"] == .integer(1)
                if case .string(let name)? = object["run"] { run = name }
                if case .integer(let size)? = object["window"] { window = Int(size) }
                whole += 1
            }
            self.sequence = UInt64(sequence)
            return UInt64(sequence)
        }
    }

    static func ack(_ sequence: UInt64, _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(#"{"ack":\#(sequence)}"#))
    }

    static func options(window: Int = 16, tick: Duration = .zero) -> GatewayOptions {
        var options = GatewayTesting.options()
        options.stream = GatewayStreamPacing(window: window, tick: tick)
        return options
    }

    /// Adds 1 to the tally and waits until the session published the rendering it makes.
    static func add(_ session: WorkflowRootSession<TallyWorkflow>, token: String) async throws -> UInt64 {
        let before = session.latestRendering.sequence
        try await session.send(event: Data("1".utf8), to: token)
        return try await withSafetyTimeout("the rendering after an event") {
            for await rendering in session.renderings() where rendering.sequence > before { return rendering.sequence }
            throw WaitFailure(description: "the session stopped")
        }
    }

    /// Connects to the stream at `path` with `query`, applies its first message to `applied` and
    /// leaves.
    static func firstMessage(
        _ client: some TestClientProtocol, _ query: String, path: String = "/api/renderings", to applied: Applied = Applied()
    ) async throws -> Applied {
        let result = Mutex(applied)
        _ = try await withSafetyTimeout("the first message of \(path)?\(query)") {
            try await client.ws("\(path)?\(query)") { inbound, _, _ in
                var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                let message = try #require(try await iterator.next())
                _ = try result.withLock { try $0.apply(message) }
            }
        }
        return result.withLock { $0 }
    }

    /// Returns once the stream's feed has the session's latest rendering (a whole-frame client
    /// sees it): what a client asks for next is answered from there.
    static func caughtUp(_ client: some TestClientProtocol, _ session: WorkflowRootSession<TallyWorkflow>) async throws {
        let latest = session.latestRendering.sequence
        _ = try await withSafetyTimeout("the stream at \(latest)") {
            try await client.ws("/api/renderings") { inbound, _, _ in
                var applied = Applied()
                for try await message in inbound.messages(maxSize: 1 << 20) where try applied.apply(message) >= latest { return }
            }
        }
    }

    @Test("?deltas=1: a whole frame first saying deltas 1, then each rendering as changes from the one before; applied, each equals the session's rendering")
    func deltasAfterAWholeFrame() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session, options: Self.options()).test(.live) { client in
            _ = try await withSafetyTimeout("ten renderings as deltas") {
                try await client.ws("/api/renderings?deltas=1") { inbound, outbound, _ in
                    var applied = Applied()
                    var sent = false
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        let sequence = try applied.apply(message)
                        try await Self.ack(sequence, outbound)
                        #expect(applied.rendering == JSONValue(json: session.latestRendering.json) || sequence < session.latestRendering.sequence)
                        if !sent {
                            sent = true
                            for _ in 0..<10 { try await session.send(event: Data("1".utf8), to: add) }
                        }
                        if case .object(let object) = applied.rendering, object["count"] == .integer(10) { break }
                    }
                    #expect(applied.whole == 1 && applied.speaksDeltas, "one whole frame, then changes only")
                    #expect(applied.deltas >= 1)
                    #expect(applied.rendering == JSONValue(json: session.latestRendering.json))
                }
            }
            // A client that does not ask (or asks for a version this stream does not speak) gets
            // whole frames, as before.
            for query in ["", "deltas=2"] {
                let applied = try await Self.firstMessage(client, query)
                #expect(applied.whole == 1 && !applied.speaksDeltas && applied.run.isEmpty, "\(query)")
            }
        }
        await session.stop()
    }

    @Test("the whole frame says the window; a client that acknowledges only once half of it is unacknowledged (as the client library does) is never held back: every rendering reaches it")
    func acknowledgingAtHalfTheWindowKeepsUp() async throws {
        let window = 6
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session, options: Self.options(window: window)).test(.live) { client in
            _ = try await withSafetyTimeout("every rendering with acknowledgements at half the window") {
                try await client.ws("/api/renderings?deltas=1") { inbound, outbound, _ in
                    var applied = Applied()
                    var unacknowledged = 0
                    var acknowledgements = 0
                    var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    // One event per message received: each rendering is a message of its own, so
                    // without its acknowledgements at half the window the stream would stop at
                    // the window.
                    for count in 1...40 {
                        let message = try #require(try await iterator.next(), "the stream ended at \(applied.sequence)")
                        let sequence = try applied.apply(message)
                        unacknowledged += 1
                        if unacknowledged >= window / 2 {
                            try await Self.ack(sequence, outbound)
                            unacknowledged = 0
                            acknowledgements += 1
                        }
                        if count < 40 { _ = try await Self.add(session, token: add) }
                    }
                    #expect(applied.window == window, "the whole frame says the window")
                    #expect(applied.rendering == JSONValue(json: session.latestRendering.json))
                    #expect(acknowledgements < 40 / 2, "one acknowledgement for several messages: \(acknowledgements)")
                }
            }
        }
        await session.stop()
    }

    @Test("a delta client that reads and acknowledges nothing is sent at most the window's messages while another keeps up with every rendering; one acknowledgement brings it to the latest in one whole frame")
    func windowBoundsASilentClient() async throws {
        let window = 4
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session, options: Self.options(window: window)).test(.live) { client in
            let silentConnected = AsyncStream<Void>.makeStream()
            let keptUp = AsyncStream<UInt64>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try await withSafetyTimeout("the silent client") {
                        try await client.ws("/api/renderings?deltas=1") { inbound, outbound, _ in
                            silentConnected.continuation.yield()
                            // Reads nothing until the other client saw the latest of 60 renderings.
                            var latest: UInt64 = 0
                            for await sequence in keptUp.stream { latest = sequence }
                            var applied = Applied()
                            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                            // What the coordinator sent it meanwhile: exactly the window (no more
                            // can be waiting: the next one read comes after the acknowledgement).
                            for _ in 0..<window {
                                _ = try applied.apply(try #require(try await iterator.next()))
                            }
                            #expect(applied.sequence < latest, "the window filled before the latest")
                            try await Self.ack(applied.sequence, outbound)
                            let next = try applied.apply(try #require(try await iterator.next()))
                            #expect(next == latest, "one message to the latest after the acknowledgement, not the next queued one")
                            #expect(applied.rendering == JSONValue(json: session.latestRendering.json))
                            // Its frame is older than the frames kept (the window's): one whole frame.
                            #expect(applied.whole == 2 && applied.deltas == window - 1, "whole, deltas to the window, then whole")
                        }
                    }
                }
                group.addTask {
                    var waiting = silentConnected.stream.makeAsyncIterator()
                    _ = await waiting.next()
                    _ = try await withSafetyTimeout("the reading client") {
                        try await client.ws("/api/renderings?deltas=1") { inbound, outbound, _ in
                            var applied = Applied()
                            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                            _ = try applied.apply(try #require(try await iterator.next()))
                            try await Self.ack(applied.sequence, outbound)
                            var last: UInt64 = 0
                            for _ in 0..<60 {
                                last = try await Self.add(session, token: add)
                                // It sees each rendering, the silent client notwithstanding.
                                while applied.sequence < last {
                                    let sequence = try applied.apply(try #require(try await iterator.next()))
                                    try await Self.ack(sequence, outbound)
                                }
                            }
                            #expect(applied.rendering == JSONValue(json: session.latestRendering.json))
                            keptUp.continuation.yield(last)
                            keptUp.continuation.finish()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        await session.stop()
    }

    @Test("resuming: since=N still kept gets only the changes after N (none when N is the latest); one not kept, newer than the latest, or of another run of the stream (or none) gets a whole frame")
    func resume() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session, options: Self.options(window: 4)).test(.live) { client in
            // A first client sees sequence N and leaves.
            let left = try await Self.firstMessage(client, "deltas=1")
            _ = try await Self.add(session, token: add)
            _ = try await Self.add(session, token: add)
            try await Self.caughtUp(client, session)
            // The feed keeps 4 frames: N is among them.
            let resumed = try await Self.firstMessage(client, "deltas=1&since=\(left.sequence)&run=\(left.run)", to: left)
            #expect(resumed.deltas == 1 && resumed.whole == left.whole, "only the changes")
            #expect(resumed.rendering == JSONValue(json: session.latestRendering.json))
            #expect(resumed.sequence == session.latestRendering.sequence)
            let latest = session.latestRendering.sequence
            _ = try await withSafetyTimeout("resumed at the latest") {
                try await client.ws("/api/renderings?deltas=1&since=\(latest)&run=\(left.run)") { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        #expect(text == #"{"from":\#(latest),"ops":[],"sequence":\#(latest)}"#, "nothing missed: no changes, never blank")
                        break
                    }
                }
            }
            for _ in 0..<5 { _ = try await Self.add(session, token: add) }
            try await Self.caughtUp(client, session)
            let now = session.latestRendering.sequence
            for query in ["since=\(left.sequence)&run=\(left.run)", "since=\(now + 1_000)&run=\(left.run)", "since=\(now)&run=another", "since=\(now)"] {
                let applied = try await Self.firstMessage(client, "deltas=1&\(query)")
                #expect(applied.whole == 1 && applied.sequence == session.latestRendering.sequence, "\(query)")
            }
        }
        await session.stop()
    }

    @Test("refusals: a malformed acknowledgement closes that stream with words (others keep theirs); a bad since or deltas is 400 before the upgrade")
    func refusals() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session, options: Self.options()).test(.live) { client in
            for bad in [#"{"ack":"x"}"#, "ack 3", #"{"ack":99999}"#, #"{"ack":-1}"#] {
                let close = try await withSafetyTimeout("closed after \(bad)") {
                    try await client.ws("/api/renderings?deltas=1") { inbound, outbound, _ in
                        var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                        _ = try await iterator.next()
                        try await outbound.write(.text(bad))
                        while try await iterator.next() != nil {}
                    }
                }
                #expect(close?.closeCode == .policyViolation, "\(bad)")
                #expect(close?.reason?.hasPrefix("bad-ack: ") == true, "\(String(describing: close?.reason))")
            }
            // The server keeps serving: a new client gets the stream.
            _ = try await Self.add(session, token: add)
            let serving = try await Self.firstMessage(client, "deltas=1")
            #expect(serving.sequence == session.latestRendering.sequence)
        }
        try await GatewayTesting.application(session: session).test(.router) { client in
            for query in ["deltas=1&since=abc", "deltas=x", "deltas=1&since=-2"] {
                try await client.execute(
                    uri: "/api/renderings?\(query)", method: .get, headers: [.upgrade: "websocket", .connection: "Upgrade"]
                ) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    let body = try GatewayTesting.decode(ErrorBody.self, response.body)
                    #expect(body.error == "bad-stream-request", "\(query)")
                }
            }
        }
        await session.stop()
    }

    @Test("GET /api/rendering: ETag is the sequence; If-None-Match naming the latest is 304 without a body, an older one 200")
    func conditionalRead() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        let add = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json).add
        try await GatewayTesting.application(session: session).test(.router) { client in
            let tag = try await client.execute(uri: "/api/rendering", method: .get) { response in
                #expect(response.status == .ok)
                return try #require(response.headers[.eTag])
            }
            #expect(tag == "\"\(session.latestRendering.sequence)\"")
            for header in [tag, "W/\(tag)", "\"0\", \(tag)", "*"] {
                try await client.execute(uri: "/api/rendering", method: .get, headers: [.ifNoneMatch: header]) { response in
                    #expect(response.status == .notModified, "\(header)")
                    #expect(response.body.readableBytes == 0)
                    #expect(response.headers[.eTag] == tag)
                }
            }
            _ = try await Self.add(session, token: add)
            try await client.execute(uri: "/api/rendering", method: .get, headers: [.ifNoneMatch: tag]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.eTag] == "\"\(session.latestRendering.sequence)\"")
            }
        }
        await session.stop()
    }
}
