import ClusterTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import Logging
import Synchronization
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// Sessions with a store, through the gateway, in process, against each real store (an SQLite
/// file, a private PostgreSQL server): passivation writes a session's tree to the store and keeps
/// nothing of it running, and a directory started again on the same store (the coordinator's
/// restart) resumes every session with its state.
@Suite("Gateway sessions with a store")
struct DurableSessionRouteTests {
    typealias Envelope = SessionRouteTests.Envelope

    /// The store `section` names, opened as the coordinator opens it (its writer).
    static func open(_ section: [String: String]) async throws -> OpenedCoordinatorStore {
        let settings = StoreSettings(kind: StoreSettings.Kind(rawValue: section["kind"] ?? "") ?? .none, path: section["path"], url: section["url"])
        return try #require(try await OpenedCoordinatorStore.open(settings, holder: "test", logger: GatewayTesting.quietLogger))
    }

    /// What the store `section` names holds, read through a connection of its own (never its
    /// writer: the directory's commits stay valid).
    static func stored(_ section: [String: String], _ id: SessionID? = nil) async throws -> (sessions: [StoredSession], checkpoint: CoordinatorCheckpoint?) {
        let store: any CoordinatorStore =
            switch section["kind"] {
            case "sqlite": try await SQLiteCoordinatorStore.open(path: section["path"] ?? "")
            default: try await PostgresCoordinatorStore.open(url: section["url"] ?? "")
            }
        do {
            let sessions = try await store.storedSessions()
            var checkpoint: CoordinatorCheckpoint?
            if let id { checkpoint = try await store.latestCheckpoint(of: .session(id)) }
            await store.close()
            return (sessions, checkpoint)
        } catch {
            await store.close()
            throw error
        }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String) async throws -> (HTTPResponse.Status, String) {
        try await client.execute(uri: uri, method: .get) { ($0.status, String(buffer: $0.body)) }
    }

    static func envelope(_ text: String) throws -> Envelope {
        try JSONDecoder().decode(Envelope.self, from: Data(text.utf8))
    }

    @Test(
        "passivation writes the session's tree to the store and stops it; its next request reactivates it from there with its state, its remote child's and its props included",
        arguments: StoreBackend.allCases)
    func passivationGoesToTheStore(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("session-passivation") { section in
            let store = try await Self.open(section)
            let fixture = try await SessionRouteTests.Fixture("gw-dsess-pass", settings: SessionSettings(idleTimeout: .zero), store: store)
            try await fixture.application().test(.router) { client in
                let id = try await SessionRouteTests.create(client, body: #"{"props": {"step": 10}}"#)
                let sessionID = try #require(SessionID(id))
                let token = try #require(try await SessionRouteTests.rendering(client, fixture, id, count: 0).rendering.c.onIncrement)
                let (status, _) = try await SessionRouteTests.post(client, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(token))", "1")
                #expect(status == .accepted)
                let before = try await SessionRouteTests.rendering(client, fixture, id, count: 10)

                #expect(await fixture.directory.passivateIdle() == 1)
                #expect(await fixture.directory.counts == (active: 0, passivated: 1))
                #expect(await fixture.parent.inspect().children.allSatisfy { !$0.path.hasPrefix("/~\(id)") }, "its remote child stopped")
                let (listed, checkpoint) = try await Self.stored(section, sessionID)
                #expect(listed.map(\.id) == [sessionID] && listed.first?.root == "board")
                let kept = try #require(checkpoint, "the passivated session's tree is in the store")
                #expect(kept.origin?.root == "board" && kept.origin?.props.map { String(decoding: $0, as: UTF8.self).contains("10") } == true)
                #expect(kept.renderingSequence >= before.sequence)

                // The first request reads it back: the count is the remote child's state.
                let (read, text) = try await Self.get(client, "/api/sessions/\(id)/rendering")
                #expect(read == .ok, "\(text)")
                let after = try Self.envelope(text)
                #expect(after.rendering.c.count == 10, "\(text)")
                #expect(after.sequence > before.sequence, "numbering continues: \(before.sequence) then \(after.sequence)")
                #expect(await fixture.directory.counts == (active: 1, passivated: 0))
                // A token of the run before answers 410; the new run's tokens work, with the
                // session's own props (step 10).
                let (stale, staleBody) = try await SessionRouteTests.post(client, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(token))", "1")
                #expect(stale == .gone, "\(staleBody)")
                let fresh = try #require(try await SessionRouteTests.rendering(client, fixture, id, count: 10).rendering.c.onIncrement)
                _ = try await SessionRouteTests.post(client, "/api/sessions/\(id)/events/\(SessionRouteTests.escaped(fresh))", "1")
                _ = try await SessionRouteTests.rendering(client, fixture, id, count: 20)
            }
            await fixture.stop()
            await store.store.close()
        }
    }

    @Test(
        "a restart on the same store resumes every session with its state and rising sequence (GET and the stream); old tokens 410, unknown ids 404, DELETE removes it from the store; passivated sessions count against max_sessions",
        arguments: StoreBackend.allCases)
    func resumesAcrossRestart(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("session-restart") { section in
            // The first run: two sessions, each changed by an event.
            let firstStore = try await Self.open(section)
            let first = try await SessionRouteTests.Fixture("gw-dsess-run1", store: firstStore)
            let (one, two, three, oneToken, sequences) = try await first.application().test(.router) { client in
                let one = try await SessionRouteTests.create(client)
                let two = try await SessionRouteTests.create(client, body: #"{"props": {"step": 10}}"#)
                // One nobody asks for again until it is ended.
                let three = try await SessionRouteTests.create(client)
                let oneToken = try #require(try await SessionRouteTests.rendering(client, first, one, count: 0).rendering.c.onIncrement)
                let twoToken = try #require(try await SessionRouteTests.rendering(client, first, two, count: 0).rendering.c.onIncrement)
                #expect(try await SessionRouteTests.post(client, "/api/sessions/\(one)/events/\(SessionRouteTests.escaped(oneToken))", "2").0 == .accepted)
                #expect(try await SessionRouteTests.post(client, "/api/sessions/\(two)/events/\(SessionRouteTests.escaped(twoToken))", "1").0 == .accepted)
                let sequences = [
                    try await SessionRouteTests.rendering(client, first, one, count: 2).sequence,
                    try await SessionRouteTests.rendering(client, first, two, count: 10).sequence,
                ]
                return (one, two, three, oneToken, sequences)
            }
            await first.stop()
            await firstStore.store.close()

            // The second run: all are listed, passivated, and come back as they were.
            let secondStore = try await Self.open(section)
            #expect(Set(secondStore.sessions.map(\.id.text)) == [one, two, three])
            let second = try await SessionRouteTests.Fixture("gw-dsess-run2", settings: SessionSettings(maxSessions: 3), store: secondStore)
            #expect(await second.directory.counts == (active: 0, passivated: 3))
            try await second.application().test(.live) { client in
                let (status, text) = try await Self.get(client, "/api/sessions/\(one)/rendering")
                #expect(status == .ok, "\(text)")
                let resumed = try Self.envelope(text)
                #expect(resumed.rendering.c.count == 2, "\(text)")
                #expect(resumed.sequence > sequences[0], "sequence went back: \(sequences[0]) then \(resumed.sequence)")
                let streamed = Mutex<Envelope?>(nil)
                _ = try await withSafetyTimeout("the resumed session's stream") {
                    try await client.ws("/api/sessions/\(two)/renderings") { inbound, _, _ in
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message else { continue }
                            let envelope = try Self.envelope(text)
                            streamed.withLock { $0 = envelope }
                            return
                        }
                    }
                }
                let twoResumed = try #require(streamed.withLock { $0 }, "the stream sent no rendering")
                #expect(twoResumed.rendering.c.count == 10 && twoResumed.sequence > sequences[1])

                // A token of the first run: 410, as the shared root's after a restart.
                let (old, oldBody) = try await SessionRouteTests.post(client, "/api/sessions/\(one)/events/\(SessionRouteTests.escaped(oneToken))", "1")
                #expect(old == .gone && oldBody.contains("restarted"), "\(oldBody)")
                let token = try #require(try await SessionRouteTests.rendering(client, second, one, count: 2).rendering.c.onIncrement)
                #expect(try await SessionRouteTests.post(client, "/api/sessions/\(one)/events/\(SessionRouteTests.escaped(token))", "1").0 == .accepted)
                _ = try await SessionRouteTests.rendering(client, second, one, count: 3)

                // Unknown and forged ids are unknown after the restart too.
                for id in [SessionID.random().text, String(one.dropLast()) + (one.hasSuffix("0") ? "1" : "0"), "not-an-id"] {
                    let (unknown, body) = try await Self.get(client, "/api/sessions/\(id)/rendering")
                    #expect(unknown == .notFound, "\(id): \(body)")
                }
                // The resumed sessions count against max_sessions (3), passivated or not.
                let (full, fullBody) = try await SessionRouteTests.post(client, "/api/sessions", "{}")
                #expect(full == .serviceUnavailable && fullBody.contains("too-many-sessions"), "\(fullBody)")

                // DELETE ends it in the store too, active (two) or still only in the store (three).
                #expect(await second.directory.counts == (active: 2, passivated: 1))
                try await client.execute(uri: "/api/sessions/\(two)", method: .delete) { #expect($0.status == .noContent) }
                try await client.execute(uri: "/api/sessions/\(three)", method: .delete) { #expect($0.status == .noContent) }
                #expect(try await Self.stored(section).sessions.map(\.id.text) == [one])
                #expect(try await Self.get(client, "/api/sessions/\(three)/rendering").0 == .notFound)
                #expect(try await SessionRouteTests.post(client, "/api/sessions", "{}").0 == .created)
            }
            await second.stop()
            await secondStore.store.close()

            // The third run: the ended sessions stay ended; the other has every change.
            let thirdStore = try await Self.open(section)
            let third = try await SessionRouteTests.Fixture("gw-dsess-run3", store: thirdStore)
            try await third.application().test(.router) { client in
                #expect(try await Self.get(client, "/api/sessions/\(two)/rendering").0 == .notFound)
                #expect(try await Self.get(client, "/api/sessions/\(three)/rendering").0 == .notFound)
                let (status, text) = try await Self.get(client, "/api/sessions/\(one)/rendering")
                #expect(status == .ok && (try? Self.envelope(text).rendering.c.count) == 3, "\(text)")
            }
            await third.stop()
            await thirdStore.store.close()
        }
    }

    @Test(
        "a newer writer and an unreadable tree in the store: a creation, a DELETE and the passivated session's request answer 503 sessions-unavailable in words, the session stays in the store, one the store no longer holds is 404, the rest keeps serving",
        arguments: StoreBackend.allCases)
    func storeRefusesOrCannotBeRead(backend: StoreBackend) async throws {
        try await backend.withEmptyStore("session-store-refuses") { section in
            let store = try await Self.open(section)
            let fixture = try await SessionRouteTests.Fixture("gw-dsess-refused", settings: SessionSettings(idleTimeout: .zero), store: store)
            try await fixture.application().test(.router) { client in
                let id = try await SessionRouteTests.create(client)
                let sessionID = try #require(SessionID(id))
                let ended = try await SessionRouteTests.create(client)
                #expect(await fixture.directory.passivateIdle() == 2)

                // Another coordinator takes the store over, ends one session and writes the
                // other's tree as bytes that are no tree snapshot.
                let newer = try await Self.open(section)
                try await newer.store.remove(.session(try #require(SessionID(ended))), fencedBy: newer.token)
                let kept = try #require(try await newer.store.latestCheckpoint(of: .session(sessionID)))
                var garbage = kept
                garbage.number += 1
                garbage.snapshot = Data("not a tree snapshot".utf8)
                try await newer.store.commit(garbage, fencedBy: newer.token)
                await newer.store.close()

                for (method, uri, words) in [
                    (HTTPRequest.Method.get, "/api/sessions/\(id)/rendering", "cannot be read"),
                    (.post, "/api/sessions", "could not be recorded in the store"),
                    (.delete, "/api/sessions/\(id)", "could not be removed from the store"),
                ] {
                    try await client.execute(uri: uri, method: method, headers: GatewayTesting.json, body: GatewayTesting.body("{}")) { response throws in
                        #expect(response.status == .serviceUnavailable, "\(method) \(uri): \(String(buffer: response.body))")
                        let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                        #expect(error.error == "sessions-unavailable" && error.message.contains(words), "\(method) \(uri): \(error)")
                    }
                }
                #expect(await fixture.directory.counts == (active: 0, passivated: 2), "kept, for a later try")
                // The one the store no longer holds is unknown, here too.
                let (gone, goneBody) = try await Self.get(client, "/api/sessions/\(ended)/rendering")
                #expect(gone == .notFound && goneBody.contains("unknown-session"), "\(goneBody)")
                #expect(await fixture.directory.counts == (active: 0, passivated: 1))
                try await client.execute(uri: "/api/rendering", method: .get) { #expect($0.status == .ok) }
                #expect(try await Self.stored(section).sessions.map(\.id) == [sessionID], "nothing was removed from the store")
            }
            await fixture.stop()
            await store.store.close()
        }
    }
}
