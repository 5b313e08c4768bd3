import ClusterTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// What only the shared store does: its URL, and a database it cannot reach or log in to, each an
/// error in words within a bounded time (what every store does is in
/// `CoordinatorStoreContractTests`, against a private server).
@Suite("PostgreSQL coordinator store")
struct PostgresCoordinatorStoreTests {
    /// The reason `url` cannot be opened (fails the test if it can).
    static func refusal(_ url: String) async -> (store: String, reason: String)? {
        do {
            let store = try await PostgresCoordinatorStore.open(url: url)
            await store.close()
            Issue.record("\(url) was opened")
            return nil
        } catch {
            guard case .cannotOpen(let store, let reason) = error else {
                Issue.record("\(url): \(error)")
                return nil
            }
            return (store, reason)
        }
    }

    @Test(
        "a malformed URL is refused in words, without connecting",
        arguments: [
            ("mysql://u@db.example/w", "not a PostgreSQL URL"),
            ("postgres://db.example/w", "no user name"),
            ("postgres://u@db.example", "no database name"),
            ("postgres://u@db.example/w?sslmode=prefer", "sslmode 'prefer' is not supported: it falls back to a connection in clear"),
            ("postgres://u@db.example/w?sslmode=strict", "unknown sslmode 'strict' (known: disable, require, verify-ca, verify-full)"),
            ("postgres://u@db.example/w?sslrootcert=/etc/wf/ca.pem", "sslrootcert is only used to verify the server's certificate, which sslmode=disable does not"),
            ("postgres://u@db.example/w?sslmode=require&sslrootcert=/etc/wf/ca.pem", "which sslmode=require does not"),
            ("postgres://u@db.example/w?sslmode=verify-ca&sslrootcert=ca.pem", "sslrootcert must be an absolute path"),
            ("postgres://u@db.example/w?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem", "sslrootcert /nonexistent/ca.pem: there is no such file"),
            ("postgres://u@/w?host=/run/pg&sslmode=require", "sslmode=require over a unix socket"),
            ("postgres://u@db.example/w?connect_timeout=soon", "connect_timeout must be a number of seconds"),
            ("postgres://u@db.example/w?operation_timeout=0", "operation_timeout must be a number of seconds"),
            ("postgres://u@db.example/w?port=99999", "port must be a number from 1 to 65535"),
            ("postgres://u@db.example/w?user=x", "unknown parameter 'user'"),
            ("postgres://u@/w?host=run/pg", "an absolute path"),
            ("postgres://u@/w", "no host"),
        ])
    func malformedURL(url: String, reason: String) async throws {
        let refused = try #require(await Self.refusal(url))
        #expect(refused.reason.contains(reason), "\(refused)")
        #expect(refused.store == url)
    }

    @Test("a password is never shown: errors name the URL with *** in its place")
    func passwordHidden() async throws {
        let refused = try #require(await Self.refusal("postgres://user:secret@127.0.0.1:1/db"))
        #expect(refused.store == "postgres://user:***@127.0.0.1:1/db")
        #expect(!refused.reason.contains("secret"))
    }

    @Test("no server at the socket, or at the port: an error in words")
    func noServer() async throws {
        let socket = try #require(await Self.refusal("postgres://postgres@/postgres?host=/nonexistent-socket-dir&port=47150"))
        #expect(socket.reason.localizedCaseInsensitiveContains("no such file"), "\(socket.reason)")
        let port = try #require(await Self.refusal("postgres://postgres@127.0.0.1:47151/postgres"))
        #expect(port.reason.localizedCaseInsensitiveContains("refused"), "\(port.reason)")
    }

    @Test("a server that accepts the connection and never answers: an error in words once connect_timeout has passed, not a hang")
    func silentServer() async throws {
        try await SilentListener.with { port in
            let refused = try #require(await Self.refusal("postgres://postgres@127.0.0.1:\(port)/postgres?connect_timeout=1"))
            #expect(refused.reason.contains("did not answer within 1"), "\(refused.reason)")
        }
    }

    @Test("coordinators opening a fresh database at the same time all succeed (one prepares the tables, the others wait)")
    func concurrentFirstOpens() async throws {
        try await StoreBackend.postgres.withEmptyStore("concurrent-open") { section in
            let url = try #require(section["url"])
            let tokens = try await withThrowingTaskGroup(of: FencingToken.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let store = try await PostgresCoordinatorStore.open(url: url)
                        do {
                            let token = try await store.acquireWriter(holder: "c\(index)")
                            await store.close()
                            return token
                        } catch {
                            await store.close()
                            throw error
                        }
                    }
                }
                return try await group.reduce(into: [FencingToken]()) { $0.append($1) }
            }
            #expect(Set(tokens).count == 6, "each writer a token of its own: \(tokens)")
        }
    }

    @Test(
        "a database that stops answering while serving: the commit fails in words once operation_timeout has passed, not held forever, and every later call at once")
    func stalledDatabase() async throws {
        try await StoreBackend.postgres.withEmptyStore("stalled") { section in
            let url = try #require(section["url"])
            let store = try await PostgresCoordinatorStore.open(url: url + "&operation_timeout=1")
            let token = try await store.acquireWriter(holder: "test")
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "before"), fencedBy: token)
            // Another session holds the checkpoint table locked: the commit waits on the server.
            let directory = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "host" }?.value)
            let port = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "port" }?.value)
            let blocker = try await PostgresConnection.connect(
                configuration: .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: "postgres", password: nil, database: "postgres"),
                id: 2, logger: Logger(label: "test.blocker"))
            try await blocker.query("BEGIN", logger: Logger(label: "test.blocker"))
            try await blocker.query("LOCK TABLE coordinator_tree_checkpoint IN ACCESS EXCLUSIVE MODE", logger: Logger(label: "test.blocker"))
            await #expect {
                try await store.commit(CoordinatorStoreContractTests.checkpoint(2, "stalled"), fencedBy: token)
            } throws: { error in
                guard case .failed(_, let operation, let reason) = error as? CoordinatorStoreError else { return false }
                return operation == "committing checkpoint 2 of shared" && reason.contains("did not answer within 1")
            }
            // The connection is closed now: every later call fails at once (a session's read
            // included), never waits for an answer that cannot come.
            await #expect {
                _ = try await store.latestCheckpoint(of: .session(SessionID.random()))
            } throws: { error in
                guard case .failed(_, _, let reason) = error as? CoordinatorStoreError else { return false }
                return reason.contains("connection to the database is closed")
            }
            try await blocker.query("ROLLBACK", logger: Logger(label: "test.blocker"))
            try await blocker.close()
            await store.close()
        }
    }

    @Test("a database the server does not have: the server's words")
    func unknownDatabase() async throws {
        try await StoreBackend.postgres.withEmptyStore("unknown-database") { section in
            let url = try #require(section["url"]).replacingOccurrences(of: "@/postgres?", with: "@/nope?")
            let refused = try #require(await Self.refusal(url))
            #expect(refused.reason.contains(#"database "nope" does not exist"#), "\(refused.reason)")
        }
    }
}
