import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowClusterTesting
import Workflow
import WorkflowCluster

/// The `store` section, its overrides, and what an operator sees when the store cannot be used.
@Suite("Store configuration")
struct StoreConfigurationTests {
    static func parse(_ json: String, file: String = "/etc/wf/cluster.json") throws -> ClusterConfiguration {
        try ClusterConfigurationParser(file: file).parse(Data(json.utf8))
    }

    static func error(_ json: String) -> ClusterConfigurationError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error as? ClusterConfigurationError
        }
    }

    @Test("no section: no store; sqlite with a relative path: beside the file")
    func section() throws {
        #expect(try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"}}"#).store == StoreSettings())
        let store = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"state/c.sqlite"}}"#).store
        #expect(store == StoreSettings(kind: .sqlite, path: "/etc/wf/state/c.sqlite"))
        let postgres = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres","url":"postgres://u@db/w"}}"#).store
        #expect(postgres == StoreSettings(kind: .postgres, url: "postgres://u@db/w"))
        let absolute = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"/var/c.sqlite"}}"#).store
        #expect(absolute.path == "/var/c.sqlite")
    }

    @Test("an unknown kind, sqlite without a path and an unknown key are configuration errors naming the key")
    func invalidSection() {
        #expect(Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"mysql"}}"#)?.description.contains("key 'store.kind'") == true)
        #expect(Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite"}}"#)?.description.contains("key 'store.path'") == true)
        #expect(Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","file":"x"}}"#) != nil)
        #expect(Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres"}}"#)?.description.contains("key 'store.url'") == true)
    }

    @Test("store.lease_ms: a standby setup, PostgreSQL only and at least 300 ms; coordinator.endpoints: every coordinator, the first the default")
    func standbySettings() throws {
        let leased = try Self.parse(
            #"{"coordinator":{"endpoints":["ipc:///tmp/a","ipc:///tmp/b"]},"store":{"kind":"postgres","url":"postgres://u@db/w","lease_ms":1500}}"#)
        #expect(leased.store == StoreSettings(kind: .postgres, url: "postgres://u@db/w", lease: .milliseconds(1_500)))
        #expect(leased.coordinatorEndpoint == "ipc:///tmp/a")
        #expect(leased.workerParentEndpoints == ["ipc:///tmp/a", "ipc:///tmp/b"])
        // A coordinator's own endpoint (the file's, or --endpoint) comes first for a worker on its host.
        let own = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/b","endpoints":["ipc:///tmp/a","ipc:///tmp/b"]}}"#)
        #expect(own.workerParentEndpoints == ["ipc:///tmp/b", "ipc:///tmp/a"])
        #expect(try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"}}"#).workerParentEndpoints == ["ipc:///tmp/x"])

        let sqlite = Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c.sqlite","lease_ms":1500}}"#)
        #expect(sqlite?.description.contains("key 'store.lease_ms'") == true && sqlite?.description.contains("postgres") == true, "\(String(describing: sqlite))")
        let short = Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres","url":"postgres://u@db/w","lease_ms":50}}"#)
        #expect(short?.description.contains("at least 300") == true, "\(String(describing: short))")
        #expect(Self.error(#"{"coordinator":{"endpoints":[]}}"#)?.description.contains("key 'coordinator.endpoints'") == true)
        #expect(Self.error(#"{"coordinator":{"endpoints":["nowhere"]}}"#)?.description.contains("coordinator.endpoints[0]") == true)
    }

    @Test("WORKFLOW_STORE_LEASE_MS and --store-lease-ms set the lease; too short, or without PostgreSQL, is a configuration error")
    func leaseOverrides() async throws {
        try await StoreDirectory.with("lease-overrides") { directory in
            let file = directory.appendingPathComponent("cluster.json").path
            try Data(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres","url":"postgres://u@db/w"}}"#.utf8)
                .write(to: URL(fileURLWithPath: file))
            #expect(try await ClusterSettings.load(file: file, environment: [:]).configuration.store.lease == nil)
            let environment = ["WORKFLOW_STORE_LEASE_MS": "2000"]
            #expect(try await ClusterSettings.load(file: file, environment: environment).configuration.store.lease == .milliseconds(2_000))
            var overrides = ClusterOverrides()
            overrides[.storeLease] = "900"
            #expect(
                try await ClusterSettings.load(file: file, overrides: overrides, environment: environment).configuration.store.lease == .milliseconds(900))
            await #expect {
                _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_LEASE_MS": "100"])
            } throws: { error in
                let text = (error as? ClusterConfigurationError)?.description ?? ""
                return text.contains("command line/environment: key 'store.lease_ms' (WORKFLOW_STORE_LEASE_MS)") && text.contains("at least 300")
            }
            // Without PostgreSQL (the kind overridden), the lease has no shared database: the
            // file's URL is the first to say so.
            await #expect {
                _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_LEASE_MS": "1500", "WORKFLOW_STORE_KIND": "none"])
            } throws: { error in
                let text = (error as? ClusterConfigurationError)?.description ?? ""
                return text.contains("key 'store.url'") && text.contains(#"store.kind "none" (from WORKFLOW_STORE_KIND)"#)
            }
        }
    }

    @Test("store.sync and store.max_commit_batch: full and 256 by default, normal for SQLite from the file, WORKFLOW_STORE_SYNC or --store-sync; an unknown mode, normal without SQLite or a batch under 1 is a configuration error naming the key")
    func syncSettings() async throws {
        let defaults = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c.sqlite"}}"#).store
        #expect(defaults.sync == .full && defaults.maxCommitBatch == 256)
        let batched = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres","url":"postgres://u@db/w","max_commit_batch":1}}"#)
        #expect(batched.store.maxCommitBatch == 1)
        #expect(Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c","max_commit_batch":0}}"#)?.description.contains("key 'store.max_commit_batch'") == true)
        let normal = try Self.parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c.sqlite","sync":"normal"}}"#)
        #expect(normal.store == StoreSettings(kind: .sqlite, path: "/etc/wf/c.sqlite", sync: .normal))
        let unknown = Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c.sqlite","sync":"off"}}"#)
        #expect(unknown?.description.contains("key 'store.sync'") == true, "\(String(describing: unknown))")
        let postgres = Self.error(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"postgres","url":"postgres://u@db/w","sync":"normal"}}"#)
        #expect(postgres?.description.contains("key 'store.sync'") == true && postgres?.description.contains("sqlite") == true, "\(String(describing: postgres))")
        try await StoreDirectory.with("sync-overrides") { directory in
            let file = directory.appendingPathComponent("cluster.json").path
            try Data(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"c.sqlite"}}"#.utf8).write(to: URL(fileURLWithPath: file))
            #expect(try await ClusterSettings.load(file: file, environment: [:]).configuration.store.sync == .full)
            #expect(try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_SYNC": "normal"]).configuration.store.sync == .normal)
            #expect(try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_MAX_COMMIT_BATCH": "8"]).configuration.store.maxCommitBatch == 8)
            var overrides = ClusterOverrides()
            overrides[.storeSync] = "full"
            #expect(
                try await ClusterSettings.load(file: file, overrides: overrides, environment: ["WORKFLOW_STORE_SYNC": "normal"]).configuration.store.sync == .full)
            await #expect {
                _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_SYNC": "sometimes"])
            } throws: { error in
                (error as? ClusterConfigurationError)?.description.contains("key 'store.sync'") == true
            }
        }
    }

    @Test("the shipped local-cluster.json keeps its store in run/")
    func shippedConfig() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let configuration = try ClusterConfigurationParser(file: root.appendingPathComponent("Config/local-cluster.json").path).load()
        #expect(configuration.store.kind == .sqlite)
        #expect(configuration.store.path.map { URL(fileURLWithPath: $0).standardized.path } == root.appendingPathComponent("run/coordinator.sqlite").standardized.path)
    }

    @Test("WORKFLOW_STORE_KIND/PATH override the file, --store-kind/--store-path override both")
    func overrides() async throws {
        try await StoreDirectory.with("overrides") { directory in
            let file = directory.appendingPathComponent("cluster.json").path
            try Data(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"store":{"kind":"sqlite","path":"file.sqlite"}}"#.utf8)
                .write(to: URL(fileURLWithPath: file))
            let fileOnly = try await ClusterSettings.load(file: file, environment: [:]).configuration.store
            #expect(fileOnly == StoreSettings(kind: .sqlite, path: directory.appendingPathComponent("file.sqlite").path))
            let environment = ["WORKFLOW_STORE_PATH": "/srv/env.sqlite"]
            #expect(try await ClusterSettings.load(file: file, environment: environment).configuration.store.path == "/srv/env.sqlite")
            let flags = try await ClusterSettings.load(
                file: file, overrides: ClusterOverrides([.storeKind: "sqlite", .storePath: "/srv/flag.sqlite"]), environment: environment)
            #expect(flags.configuration.store == StoreSettings(kind: .sqlite, path: "/srv/flag.sqlite"))
            // A path with the kind "none" asks for durability and gets none: refused, naming both.
            await #expect {
                _ = try await ClusterSettings.load(
                    file: file, overrides: ClusterOverrides([.storeKind: "none", .storePath: "/srv/flag.sqlite"]), environment: environment)
            } throws: { error in
                let text = (error as? ClusterConfigurationError)?.description ?? ""
                return text.contains("command line/environment: key 'store.path' (--store-path)") && text.contains(#"store.kind "none" (from --store-kind)"#)
            }
            // The file's path with another layer's kind "postgres" contradicts it: refused, naming both.
            await #expect {
                _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_KIND": "postgres", "WORKFLOW_STORE_URL": "postgres://u@db/w"])
            } throws: { error in
                let text = (error as? ClusterConfigurationError)?.description ?? ""
                return text.contains("cluster.json: key 'store.path'") && text.contains(#"store.kind "postgres" (from WORKFLOW_STORE_KIND)"#)
            }
            await #expect {
                _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_STORE_KIND": "etcd"])
            } throws: { error in
                (error as? ClusterConfigurationError)?.description.contains("command line/environment: key 'store.kind'") == true
            }
        }
    }

    @Test("a store that cannot be opened stops the coordinator with exit 78 and the reason in words")
    func unopenableStore() async throws {
        try await ClusterFixture.with("bad-store") { cluster in
            let missing = cluster.directory.appendingPathComponent("no-such-dir/c.sqlite").path
            let fromFlag = try await OperatorErrorTests.run(
                cluster, "test-coordinator", ["--config", cluster.configPath, "--store-kind", "sqlite", "--store-path", missing])
            #expect(fromFlag.status == 78, "\(fromFlag.log)")
            #expect(fromFlag.log.contains("cannot open the store \(missing): its directory"), "\(fromFlag.log)")

            let garbage = cluster.directory.appendingPathComponent("garbage.sqlite")
            try Data(repeating: 0x41, count: 4096).write(to: garbage)
            let fromEnvironment = try await OperatorErrorTests.run(
                cluster, "test-coordinator", ["--config", cluster.configPath],
                environment: ["WORKFLOW_STORE_KIND": "sqlite", "WORKFLOW_STORE_PATH": garbage.path])
            #expect(fromEnvironment.status == 78, "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains("cannot open the store \(garbage.path)"), "\(fromEnvironment.log)")
            #expect(fromEnvironment.log.contains("not a database"), "\(fromEnvironment.log)")
        }
    }

    @Test("a malformed, unreachable or silent PostgreSQL store stops the coordinator with exit 78 and the reason in words, never a hang")
    func unopenablePostgresStore() async throws {
        try await ClusterFixture.with("bad-postgres") { cluster in
            let malformed = try await OperatorErrorTests.run(
                cluster, "test-coordinator", ["--config", cluster.configPath, "--store-kind", "postgres", "--store-url", "mysql://u@db/w"])
            #expect(malformed.status == 78, "\(malformed.log)")
            #expect(malformed.log.contains("cannot open the store mysql://u@db/w: not a PostgreSQL URL"), "\(malformed.log)")

            let noURL = try await OperatorErrorTests.run(
                cluster, "test-coordinator", ["--config", cluster.configPath], environment: ["WORKFLOW_STORE_KIND": "postgres"])
            #expect(noURL.status == 78, "\(noURL.log)")
            #expect(noURL.log.contains("key 'store.url'"), "\(noURL.log)")

            let absent = "postgres://postgres:secret@/postgres?host=\(cluster.directory.path)/no-server&port=47152"
            let noServer = try await OperatorErrorTests.run(
                cluster, "test-coordinator", ["--config", cluster.configPath],
                environment: ["WORKFLOW_STORE_KIND": "postgres", "WORKFLOW_STORE_URL": absent])
            #expect(noServer.status == 78, "\(noServer.log)")
            #expect(noServer.log.contains("cannot open the store postgres://postgres:***@/postgres"), "\(noServer.log)")
            #expect(!noServer.log.contains("secret"), "\(noServer.log)")

            try await SilentListener.with { port in
                let silent = try await OperatorErrorTests.run(
                    cluster, "test-coordinator",
                    ["--config", cluster.configPath, "--store-kind", "postgres", "--store-url", "postgres://u@127.0.0.1:\(port)/w?connect_timeout=1"])
                #expect(silent.status == 78, "\(silent.log)")
                #expect(silent.log.contains("did not answer within 1"), "\(silent.log)")
            }
        }
    }

    @Test("TLS to PostgreSQL: verify-full starts and says so first; a wrong host name, an unknown CA, require without TLS on the server or an unknown sslmode exit 78 in words")
    func postgresTLS() async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("PostgreSQL store test skipped: \(reason)") }
        try await ClusterFixture.with("postgres-tls") { cluster in
            let trusted = try await TestCertificates.make("trusted", in: cluster.directory, hosts: ["localhost"])
            let unknown = try await TestCertificates.make("unknown", in: cluster.directory, hosts: ["localhost"])
            func start(_ url: String) async throws -> (status: Int32, log: String) {
                try await OperatorErrorTests.run(
                    cluster, "test-coordinator", ["--config", cluster.configPath, "--store-kind", "postgres", "--store-url", url])
            }
            try await PrivatePostgres.with(listeningOnLoopback: true, tls: trusted.server) { server in
                let url = { (host: String, authority: URL) in
                    "postgres://postgres@\(host):\(server.port)/postgres?sslmode=verify-full&sslrootcert=\(authority.path)"
                }
                let verified = url("localhost", trusted.authority)
                let coordinator = try await cluster.startCoordinator(["--store-kind", "postgres", "--store-url", verified])
                let line = try await coordinator.stderr.first("the store's guarantee") { $0.contains("store: postgres") }
                #expect(line.contains("the connection TLS (sslmode=verify-full): encrypted, the server's certificate signed by a CA of \(trusted.authority.path) and naming its host"), "\(line)")
                #expect(try await coordinator.terminate() == 0)

                let wrongHost = try await start(url("127.0.0.1", trusted.authority))
                #expect(wrongHost.status == 78, "\(wrongHost.log)")
                #expect(wrongHost.log.contains("the certificate of the server at 127.0.0.1:\(server.port) does not name that host"), "\(wrongHost.log)")
                let unknownCA = try await start(url("localhost", unknown.authority))
                #expect(unknownCA.status == 78, "\(unknownCA.log)")
                #expect(unknownCA.log.contains("is not signed by a CA of sslrootcert \(unknown.authority.path)"), "\(unknownCA.log)")
                let unknownMode = try await start("postgres://postgres@localhost:\(server.port)/postgres?sslmode=verify")
                #expect(unknownMode.status == 78, "\(unknownMode.log)")
                #expect(unknownMode.log.contains("unknown sslmode 'verify' (known: disable, require, verify-ca, verify-full)"), "\(unknownMode.log)")
            }
            try await PrivatePostgres.with(listeningOnLoopback: true) { server in
                let clear = try await start("postgres://postgres@127.0.0.1:\(server.port)/postgres?sslmode=require")
                #expect(clear.status == 78, "\(clear.log)")
                #expect(clear.log.contains("offers no TLS, which sslmode=require requires"), "\(clear.log)")
            }
        }
    }

    @Test("a restarted coordinator resumes from its store; --restore of a snapshot file is ignored then, with a warning")
    func resumesFromStore() async throws {
        try await ClusterFixture.with("restore-over-store") { cluster in
            let path = cluster.directory.appendingPathComponent("c.sqlite").path
            let file = cluster.directory.appendingPathComponent("root.snapshot").path
            let store = ["--store-kind", "sqlite", "--store-path", path]
            var coordinator = try await cluster.startCoordinator(store + ["--snapshot-file", file])
            #expect(try await coordinator.terminate() == 0)
            #expect(FileManager.default.fileExists(atPath: file))

            coordinator = try await cluster.startCoordinator(store + ["--restore", file])
            try await coordinator.stderr.first("the coordinator to resume from its store") { $0.contains("resuming the root from the store's checkpoint") }
            #expect(coordinator.stderr.lines.contains { $0.contains("--restore ignored: the store holds checkpoint") })
            #expect(!coordinator.stderr.lines.contains { $0.contains("restoring the root from a snapshot") })
            #expect(try await coordinator.terminate() == 0)
        }
    }
}
