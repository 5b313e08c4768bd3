import ClusterTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// The store's connection to PostgreSQL over TLS (`sslmode`, `sslrootcert`), against a private
/// server serving TLS with a certificate for `localhost` signed by a CA the test makes: what
/// connects, and what is refused at start in words.
@Suite(
    "PostgreSQL store over TLS", .enabled(if: PrivatePostgres.unavailableReason == nil, Comment(rawValue: PrivatePostgres.unavailableReason ?? "")))
struct PostgresTLSTests {
    /// Runs `body` with a server on loopback serving TLS with a certificate naming `localhost`
    /// only, signed by `trusted`; `unknown` is a second CA that signed nothing the server has.
    static func withServer(
        _ label: String, _ body: (_ server: PrivatePostgres, _ trusted: TestCertificates, _ unknown: TestCertificates) async throws -> Void
    ) async throws {
        try await StoreDirectory.with(label) { directory in
            let trusted = try await TestCertificates.make("trusted", in: directory, hosts: ["localhost"])
            let unknown = try await TestCertificates.make("unknown", in: directory, hosts: ["localhost"])
            try await PrivatePostgres.with(listeningOnLoopback: true, tls: trusted.server) { server in
                try await body(server, trusted, unknown)
            }
        }
    }

    /// The URL of `server` over TCP at `host`, with `parameters`.
    static func url(_ server: PrivatePostgres, host: String, _ parameters: String) -> String {
        "postgres://postgres@\(host):\(server.port)/postgres?\(parameters)"
    }

    /// How many of the server's TCP connections are encrypted and how many are not, as the
    /// server sees them (`pg_stat_ssl`), asked over its unix socket.
    static func tcpConnections(_ server: PrivatePostgres) async throws -> (encrypted: Int, clear: Int) {
        let logger = Logger(label: "test.tls-census")
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                unixSocketPath: server.directory.appendingPathComponent(".s.PGSQL.\(server.port)").path, username: "postgres", password: nil,
                database: "postgres"),
            id: 9, logger: logger)
        do {
            let rows = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
                FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid WHERE a.client_addr IS NOT NULL
                """, logger: logger)
            var census = (encrypted: 0, clear: 0)
            for try await (encrypted, clear) in rows.decode((Int64, Int64).self) { census = (Int(encrypted), Int(clear)) }
            try await connection.close()
            return census
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Opens the store at `url`, takes the writer's token and commits once; returns the server's
    /// census of TCP connections while the store is open (an earlier store's, closed, may still
    /// be ending: only a connection in clear is the one of `disable`, which runs last).
    static func useStore(_ url: String, on server: PrivatePostgres) async throws -> (encrypted: Int, clear: Int) {
        let store = try await PostgresCoordinatorStore.open(url: url)
        do {
            let token = try await store.acquireWriter(holder: "tls test")
            try await store.commit(CoordinatorStoreContractTests.checkpoint(1, "over tls"), fencedBy: token)
            let census = try await tcpConnections(server)
            await store.close()
            return census
        } catch {
            await store.close()
            throw error
        }
    }

    @Test("sslmode=require, verify-full (the certificate's host, its CA) and verify-ca (its CA, any host) connect encrypted; disable connects in clear")
    func connects() async throws {
        try await Self.withServer("tls-connects") { server, trusted, _ in
            let require = try await Self.useStore(Self.url(server, host: "127.0.0.1", "sslmode=require"), on: server)
            #expect(require.encrypted >= 1 && require.clear == 0, "\(require)")
            let full = try await Self.useStore(
                Self.url(server, host: "localhost", "sslmode=verify-full&sslrootcert=\(trusted.authority.path)"), on: server)
            #expect(full.encrypted >= 1 && full.clear == 0, "\(full)")
            let ca = try await Self.useStore(Self.url(server, host: "127.0.0.1", "sslmode=verify-ca&sslrootcert=\(trusted.authority.path)"), on: server)
            #expect(ca.encrypted >= 1 && ca.clear == 0, "\(ca)")
            let clear = try await Self.useStore(Self.url(server, host: "127.0.0.1", "sslmode=disable"), on: server)
            #expect(clear.clear == 1, "\(clear)")
        }
    }

    @Test("verify-full refuses a certificate naming another host, or signed by an unknown CA or by none the system trusts, at start in words")
    func refusesUnverifiedServers() async throws {
        try await Self.withServer("tls-refuses") { server, trusted, unknown in
            let wrongHost = try #require(
                await PostgresCoordinatorStoreTests.refusal(Self.url(server, host: "127.0.0.1", "sslmode=verify-full&sslrootcert=\(trusted.authority.path)")))
            #expect(wrongHost.reason.contains("the certificate of the server at 127.0.0.1:\(server.port) does not name that host"), "\(wrongHost.reason)")
            let unknownCA = try #require(
                await PostgresCoordinatorStoreTests.refusal(Self.url(server, host: "localhost", "sslmode=verify-full&sslrootcert=\(unknown.authority.path)")))
            #expect(
                unknownCA.reason.contains("the certificate of the server at localhost:\(server.port) is not signed by a CA of sslrootcert \(unknown.authority.path)"),
                "\(unknownCA.reason)")
            let systemRoots = try #require(await PostgresCoordinatorStoreTests.refusal(Self.url(server, host: "localhost", "sslmode=verify-ca")))
            #expect(systemRoots.reason.contains("is not signed by a CA the system trusts"), "\(systemRoots.reason)")
        }
    }

    @Test("sslmode=require against a server without TLS is refused at start in words, never in clear")
    func requireWithoutTLS() async throws {
        try await PrivatePostgres.with(listeningOnLoopback: true) { server in
            let refused = try #require(await PostgresCoordinatorStoreTests.refusal(Self.url(server, host: "127.0.0.1", "sslmode=require")))
            #expect(refused.reason.contains("the server at 127.0.0.1:\(server.port) offers no TLS, which sslmode=require requires"), "\(refused.reason)")
        }
    }

    @Test("an sslrootcert that is not a PEM file of certificates is refused in words before connecting")
    func unreadableRootCertificate() async throws {
        try await StoreDirectory.with("tls-bad-root") { directory in
            let garbage = directory.appendingPathComponent("ca.pem")
            try Data("not a certificate\n".utf8).write(to: garbage)
            let refused = try #require(
                await PostgresCoordinatorStoreTests.refusal("postgres://u@127.0.0.1:1/w?sslmode=verify-full&sslrootcert=\(garbage.path)"))
            #expect(refused.reason.contains("sslrootcert \(garbage.path)"), "\(refused.reason)")
            #expect(!refused.reason.contains("refused"), "not connected: \(refused.reason)")
        }
    }
}
