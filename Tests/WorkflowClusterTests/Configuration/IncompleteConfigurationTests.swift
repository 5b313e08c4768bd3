import Foundation
import RemoteTestSupport
import Testing
import WorkflowClusterTesting
@testable import WorkflowCluster
import WorkflowRemote

/// Incomplete or contradictory configurations are refused, from the file, a flag or a variable,
/// naming the key, where it came from and what it needs; the start's first lines say what is
/// guaranteed.
@Suite("Incomplete configurations")
struct IncompleteConfigurationTests {
    /// The error loading `json` (as `incomplete.json`) with `environment` and `overrides`, in words.
    static func refusal(_ json: String, environment: [String: String] = [:], overrides: ClusterOverrides = ClusterOverrides()) async -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-incomplete-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            _ = try await ClusterSettings.load(file: file, overrides: overrides, environment: environment)
            return "no error"
        } catch {
            return ((error as? ClusterConfigurationError)?.description ?? "\(error)").replacingOccurrences(of: file, with: "incomplete.json")
        }
    }

    static let base = #"{"coordinator":{"endpoint":"ipc:///tmp/x"}"#

    @Test("a store path or URL without its kind is refused from the file, a flag or a variable, naming the key, its source and store.kind")
    func storeWithoutKind() async {
        let filePath = await Self.refusal(Self.base + #","store":{"path":"run/x.sqlite"}}"#)
        #expect(filePath.contains("incomplete.json: key 'store.path'") && filePath.contains(#"store.kind "sqlite" with it"#), "\(filePath)")
        #expect(filePath.contains(#"store.kind "none" (the default)"#), "\(filePath)")
        let fileURL = await Self.refusal(Self.base + #","store":{"url":"postgres://u@db/w"}}"#)
        #expect(fileURL.contains("key 'store.url'") && fileURL.contains(#"store.kind "postgres" with it"#), "\(fileURL)")
        let flag = await Self.refusal(Self.base + "}", overrides: ClusterOverrides([.storePath: "/srv/x.sqlite"]))
        #expect(flag.contains("command line/environment: key 'store.path' (--store-path)") && flag.contains("--store-kind"), "\(flag)")
        let variable = await Self.refusal(Self.base + "}", environment: ["WORKFLOW_STORE_PATH": "/srv/x.sqlite"])
        #expect(variable.contains("key 'store.path' (WORKFLOW_STORE_PATH)") && variable.contains("WORKFLOW_STORE_KIND"), "\(variable)")
        // The kind from another layer completes it.
        #expect(await Self.refusal(Self.base + #","store":{"kind":"sqlite"}}"#, environment: ["WORKFLOW_STORE_PATH": "/srv/x.sqlite"]) == "no error")
        // A kind without its path or URL.
        let kindAlone = await Self.refusal(Self.base + "}", overrides: ClusterOverrides([.storeKind: "sqlite"]))
        #expect(kindAlone.contains("key 'store.path'") && kindAlone.contains(#"store.kind "sqlite" (from --store-kind) needs it"#), "\(kindAlone)")
    }

    @Test("settings that need another, or exclude one, are refused naming both", arguments: [
        (#","store":{"kind":"postgres","url":"postgres://u@db/w","sync":"normal"}}"#, "store.sync", "store.kind"),
        (#","store":{"kind":"sqlite","path":"x","lease_ms":2000}}"#, "store.lease_ms", "store.kind"),
        (#","store":{"max_commit_batch":4}}"#, "store.max_commit_batch", "store.kind"),
        (#","snapshot":{"interval_ms":500}}"#, "snapshot.file", "snapshot.interval_ms"),
        (#","sessions":{"enabled":false,"max_sessions":5}}"#, "sessions.max_sessions", "sessions.enabled"),
        (#","rebalance":{"enabled":false,"spread":3}}"#, "rebalance.spread", "rebalance.enabled"),
        (#","sessions":{"advertised_url":"http://a:1"}}"#, "sessions.spread_lease_ms", "sessions.advertised_url"),
    ])
    func dependencies(json: String, key: String, other: String) async {
        let words = await Self.refusal(Self.base + json)
        #expect(words.contains("incomplete.json: key '\(key)'") && words.contains(other), "\(words)")
    }

    @Test("an unknown root names the file (or the flag) and coordinator.root")
    func unknownRoot() throws {
        let roots = RootWorkflowRegistry().registering("board") { TallyWorkflow() }
        let parser = ClusterConfigurationParser(file: "cluster.json")
        let document = try parser.document(Data(#"{"coordinator":{"endpoint":"ipc:///tmp/x","root":"boards"}}"#.utf8))
        let settings = try ClusterSettings(file: "cluster.json", values: document.values, workers: [], placement: PlacementTable())
        #expect {
            try settings.checkRoot(in: roots)
        } throws: { error in
            (error as? ClusterConfigurationError)?.description
                == #"invalid configuration cluster.json: key 'coordinator.root': expected the name of a root workflow the coordinator registers, found unknown root workflow "boards" (known: board)"#
        }
    }

    @Test("the guarantee lines say which store, how durable, the lease, the security, the sessions and the gateway")
    func guarantees() throws {
        var configuration = try ClusterConfigurationParser(file: "/etc/wf/c.json").parse(
            Data(#"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"},"store":{"kind":"sqlite","path":"x.sqlite","sync":"normal"}}"#.utf8))
        var lines = ClusterGuarantees.lines(for: configuration)
        #expect(lines[0] == "store: sqlite /etc/wf/x.sqlite (sync normal): an answered event is committed first and survives a coordinator crash (SIGKILL included), not a machine crash")
        #expect(lines[1].hasPrefix("lease: none: this coordinator takes the store as its only writer"))
        #expect(lines[2].hasPrefix("security: curve on tcp://127.0.0.1:5570"))
        #expect(lines[3].hasPrefix("sessions: on, at most 10000") && lines[3].hasSuffix("kept in the store"))
        #expect(lines[4] == "gateway: off")
        configuration.store = StoreSettings()
        configuration.sessions = nil
        configuration.coordinatorEndpoint = "ipc:///tmp/x"
        configuration.security.mode = nil
        lines = ClusterGuarantees.lines(for: configuration)
        #expect(lines[0].hasPrefix("store: none: an answered event is not durable"))
        #expect(lines[1] == "lease: none (no store)")
        #expect(lines[2].hasPrefix("security: plaintext on ipc:///tmp/x"))
        #expect(lines[3] == "sessions: off (the shared root only)")
    }

    @Test("the store's line says whether the connection to PostgreSQL is in clear, and by default it is, in words")
    func postgresGuarantees() {
        var configuration = ClusterConfiguration(coordinatorEndpoint: "ipc:///tmp/x")
        configuration.store = StoreSettings(kind: .postgres, url: "postgres://app:secret@db.example/w")
        #expect(ClusterGuarantees.lines(for: configuration)[0].hasSuffix("; the connection in clear (sslmode=disable, the default): not encrypted, use a unix socket or a trusted network"))
        configuration.store.url = "postgres://app:secret@db.example/w?sslmode=require"
        #expect(ClusterGuarantees.lines(for: configuration)[0].hasSuffix("; the connection TLS (sslmode=require): encrypted, the server's certificate not verified"))
        configuration.store.url = "postgres://app:secret@db.example/w?sslmode=verify-full&sslrootcert=/etc/wf/ca.pem"
        let line = ClusterGuarantees.lines(for: configuration)[0]
        #expect(line.hasSuffix("; the connection TLS (sslmode=verify-full): encrypted, the server's certificate signed by a CA of /etc/wf/ca.pem and naming its host"), "\(line)")
        #expect(!line.contains("secret"))
    }
}
