import ClusterTestSupport
import Foundation
import Testing
import WorkflowCluster

/// `sessions.spread_lease_ms` and `sessions.advertised_url`: from the file, the environment and
/// flags, and the configurations a coordinator cannot run them with, refused in words (exit 78 at
/// start); a worker reading the same file ignores them.
@Suite("Spread sessions configuration")
struct SpreadSessionConfigurationTests {
    static let postgres = #""store":{"kind":"postgres","url":"postgres://u@db/w"}"#

    /// Loads `json` as a file, with `environment` and `overrides`.
    static func load(
        _ json: String, environment: [String: String] = [:], overrides: ClusterOverrides = ClusterOverrides()
    ) async throws -> ClusterConfiguration {
        try await StoreDirectory.with("spread-config") { directory in
            let file = directory.appendingPathComponent("cluster.json").path
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            var settings = try await ClusterSettings.load(file: file, overrides: overrides, environment: environment)
            try settings.validateSpreadSessions()
            return settings.configuration
        }
    }

    /// The configuration error loading `json` with `environment` gives, in words.
    static func refusal(_ json: String, environment: [String: String] = [:]) async -> String {
        do {
            _ = try await load(json, environment: environment)
            return "no error"
        } catch {
            return (error as? ClusterConfigurationError)?.description ?? "\(error)"
        }
    }

    @Test("the file, WORKFLOW_SESSIONS_* and the flags set the lease and the advertised URL; none: not spread")
    func layers() async throws {
        let plain = try await Self.load(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"gateway":{"listen":"127.0.0.1:0"},\#(Self.postgres)}"#)
        #expect(plain.sessions?.spread == nil)
        let file = #"{"coordinator":{"endpoint":"ipc:///tmp/x"},"gateway":{"listen":"127.0.0.1:0"},\#(Self.postgres),"#
            + #""sessions":{"spread_lease_ms":1500,"advertised_url":"http://a.example:8080/"}}"#
        let fromFile = try await Self.load(file)
        #expect(fromFile.sessions?.spread == SessionSpreadSettings(lease: .milliseconds(1_500), advertisedURL: "http://a.example:8080"))
        let environment = ["WORKFLOW_SESSIONS_SPREAD_LEASE_MS": "2000", "WORKFLOW_SESSIONS_ADVERTISED_URL": "http://b.example:9000"]
        let fromEnvironment = try await Self.load(file, environment: environment)
        #expect(fromEnvironment.sessions?.spread == SessionSpreadSettings(lease: .milliseconds(2_000), advertisedURL: "http://b.example:9000"))
        var overrides = ClusterOverrides()
        overrides[.sessionsSpreadLease] = "900"
        overrides[.sessionsAdvertisedURL] = "https://c.example"
        let fromFlags = try await Self.load(file, environment: environment, overrides: overrides)
        #expect(fromFlags.sessions?.spread == SessionSpreadSettings(lease: .milliseconds(900), advertisedURL: "https://c.example"))
        // Behind a reverse proxy, the URL has the proxy's prefix for this coordinator (no trailing slash kept).
        overrides[.sessionsAdvertisedURL] = "https://app.example/coordinators/a/"
        let prefixed = try await Self.load(file, overrides: overrides)
        #expect(prefixed.sessions?.spread?.advertisedURL == "https://app.example/coordinators/a")
    }

    @Test("spread with the SQLite store or none, with a root lease, without a gateway or its URL, or too short a lease: refused, naming the key")
    func refusals() async {
        let base = #"{"coordinator":{"endpoint":"ipc:///tmp/x"},"gateway":{"listen":"127.0.0.1:0"},"#
        let spread = #""sessions":{"spread_lease_ms":1500,"advertised_url":"http://a:1"}"#
        let sqlite = await Self.refusal(base + #""store":{"kind":"sqlite","path":"c.sqlite"},"# + spread + "}")
        #expect(sqlite.contains("key 'sessions.spread_lease_ms'") && sqlite.contains("postgres") && sqlite.contains("SQLite"), "\(sqlite)")
        let none = await Self.refusal(base + spread + "}")
        #expect(none.contains("key 'sessions.spread_lease_ms'") && none.contains("store.kind \"none\""), "\(none)")
        let leased = await Self.refusal(base + #""store":{"kind":"postgres","url":"postgres://u@db/w","lease_ms":1500},"# + spread + "}")
        #expect(leased.contains("no store.lease_ms"), "\(leased)")
        let noGateway = await Self.refusal(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},\#(Self.postgres),"# + spread + "}")
        #expect(noGateway.contains("key 'gateway.listen'"), "\(noGateway)")
        let noURL = await Self.refusal(base + Self.postgres + #","sessions":{"spread_lease_ms":1500}}"#)
        #expect(noURL.contains("key 'sessions.advertised_url'") && noURL.contains("http://HOST:PORT"), "\(noURL)")
        let badURL = await Self.refusal(base + Self.postgres + #","sessions":{"spread_lease_ms":1500,"advertised_url":"a.example:80"}}"#)
        #expect(badURL.contains("key 'sessions.advertised_url'"), "\(badURL)")
        for bad in ["http://a:1/p?q=1", "http://a:1/p#f", "ftp://a:1", "http://user@a:1/p", "http://a:1//p"] {
            let refused = await Self.refusal(base + Self.postgres + #","sessions":{"spread_lease_ms":1500,"advertised_url":"\#(bad)"}}"#)
            #expect(refused.contains("key 'sessions.advertised_url'") && refused.contains("PREFIX"), "\(bad): \(refused)")
        }
        let short = await Self.refusal(base + Self.postgres + #","sessions":{"spread_lease_ms":100,"advertised_url":"http://a:1"}}"#)
        #expect(short.contains("at least 300"), "\(short)")
        let urlAlone = await Self.refusal(base + Self.postgres + #","sessions":{"advertised_url":"http://a:1"}}"#)
        #expect(urlAlone.contains("key 'sessions.spread_lease_ms'") && urlAlone.contains("sessions.advertised_url"), "\(urlAlone)")
        let fromEnvironment = await Self.refusal(
            base + #""store":{"kind":"sqlite","path":"c.sqlite"}}"#,
            environment: ["WORKFLOW_SESSIONS_SPREAD_LEASE_MS": "1500", "WORKFLOW_SESSIONS_ADVERTISED_URL": "http://a:1"])
        #expect(fromEnvironment.contains("command line/environment: key 'sessions.spread_lease_ms'"), "\(fromEnvironment)")
        let notANumber = await Self.refusal(base + Self.postgres + "}", environment: ["WORKFLOW_SESSIONS_SPREAD_LEASE_MS": "soon"])
        #expect(notANumber.contains("key 'sessions.spread_lease_ms'") && notANumber.contains("\"soon\""), "\(notANumber)")
    }

    @Test("a worker loads a file with spread sessions and no advertised URL (each coordinator gives its own by flag)")
    func workerIgnoresSpread() async throws {
        try await StoreDirectory.with("spread-worker") { directory in
            let file = directory.appendingPathComponent("cluster.json").path
            try Data(
                #"{"coordinator":{"endpoint":"ipc:///tmp/x"},"gateway":{"listen":"127.0.0.1:0"},\#(Self.postgres),"sessions":{"spread_lease_ms":1500}}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: file))
            var settings = try await ClusterSettings.load(file: file, environment: [:])
            #expect(settings.configuration.sessions?.spread?.lease == .milliseconds(1_500))
            #expect(throws: ClusterConfigurationError.self) { try settings.validateSpreadSessions() }
        }
    }
}
