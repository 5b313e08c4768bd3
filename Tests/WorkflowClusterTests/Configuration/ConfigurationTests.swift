import Foundation
import Logging
import Testing
import WorkflowClusterTesting
@testable import WorkflowCluster
import WorkflowRemote

/// Configuration parsing, validation and precedence, without processes.
@Suite("Cluster configuration")
struct ConfigurationTests {
    let parser = ClusterConfigurationParser(file: "test.json")

    private func parse(_ json: String) throws -> ClusterConfiguration {
        try parser.parse(Data(json.utf8))
    }

    private func rejection(_ json: String) -> ClusterConfigurationError? {
        do {
            _ = try parse(json)
            return nil
        } catch let error as ClusterConfigurationError {
            return error
        } catch {
            return nil
        }
    }

    @Test("the shipped local-cluster.json (the email browser demo's) parses into its placement, with the gateway on loopback port 8570")
    func shippedConfig() throws {
        let root = try #require(repositoryFolder(holding: "Config/local-cluster.json", from: #filePath))
        let configuration = try ClusterConfigurationParser(file: root.appendingPathComponent("Config/local-cluster.json").path).load()
        #expect(configuration.workers.map(\.name) == ["worker-1", "worker-2"])
        #expect(configuration.placement.placement(typeName: "EmailBrowser.InboxWorkflow", path: "/x") == .worker("worker-1"))
        #expect(configuration.placement.placement(typeName: "EmailBrowser.MessageWorkflow", path: "/x") == .worker("worker-2"))
        #expect(configuration.securityMode == .curve)
        #expect(configuration.gateway.listen == GatewayAddress(host: "127.0.0.1", port: 8570), "the demo's page at http://127.0.0.1:8570/")
        #expect(configuration.gateway.bearerTokenFile == nil)
    }

    @Test("without a security mode a tcp endpoint runs CURVE and an ipc endpoint plaintext; an explicit mode wins")
    func securityModeDefaults() throws {
        #expect(try parse(#"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"}}"#).securityMode == .curve)
        #expect(try parse(#"{"coordinator":{"endpoint":"tcp://0.0.0.0:5570"},"security":{}}"#).securityMode == .curve)
        #expect(try parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"}}"#).securityMode == .plaintext)
        #expect(try parse(#"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"},"security":{"mode":"plaintext"}}"#).securityMode == .plaintext)
        #expect(try parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"},"security":{"mode":"curve"}}"#).securityMode == .curve)
        // The mode follows the endpoint in force, after an override.
        var configuration = try parse(#"{"coordinator":{"endpoint":"ipc:///tmp/x"}}"#)
        configuration.coordinatorEndpoint = "tcp://127.0.0.1:5570"
        #expect(configuration.securityMode == .curve)
    }

    @Test("key paths default to keygen's layout in keys_dir (keys/ beside the file); a named file wins")
    func keyPathDefaults() throws {
        let parser = ClusterConfigurationParser(file: "/etc/wf/cluster.json")
        let defaults = try parser.parse(Data(#"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"}}"#.utf8)).security
        #expect(defaults.keysDirectory == "/etc/wf/keys")
        #expect(defaults.serverSecretKeyPath == "/etc/wf/keys/coordinator.key")
        #expect(defaults.serverPublicKeyPath == "/etc/wf/keys/coordinator.pub")
        #expect(defaults.allowedClientKeysPath == "/etc/wf/keys/allowed-workers")
        #expect(defaults.clientSecretKeyPath(forWorker: "w1") == "/etc/wf/keys/workers/w1.key")
        let moved = try parser.parse(Data(
            #"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"},"security":{"keys_dir":"secrets","server_secret_key":"/srv/c.key"}}"#.utf8)).security
        #expect(moved.serverSecretKeyPath == "/srv/c.key")
        #expect(moved.allowedClientKeysPath == "/etc/wf/secrets/allowed-workers")
    }

    @Test("relative paths: the store's beside the file, the snapshot's from the working directory (as they always were)")
    func relativePaths() throws {
        let configuration = try ClusterConfigurationParser(file: "/etc/wf/cluster.json").parse(Data(
            #"{"coordinator":{"endpoint":"ipc:///x"},"store":{"kind":"sqlite","path":"c.sqlite"},"snapshot":{"file":"run/c.snapshot"}}"#.utf8))
        #expect(configuration.store.path == "/etc/wf/c.sqlite")
        #expect(configuration.snapshotFile == "run/c.snapshot")
    }

    @Test("pool rules choose least-loaded or hashed placement")
    func poolStrategies() throws {
        let configuration = try parse(
            #"{"coordinator":{"endpoint":"tcp://127.0.0.1:5570"},"placement":[{"match":"*Inbox*","pool":"a"},{"match":"/root/*","pool":"b","strategy":"hashed"}]}"#)
        #expect(configuration.placement.rules.map(\.placement) == [.pool("a"), .hashed(pool: "b")])
    }

    @Test("the start's placement grace and rebalancing: on by default, tunable, or off")
    func placementGraceAndRebalancing() throws {
        let defaults = try parse(#"{"coordinator":{"endpoint":"ipc:///x"}}"#)
        #expect(defaults.placementGrace == .seconds(2))
        #expect(defaults.rebalancing == RebalancePolicy(movesAtOnce: 4, spread: 2))
        let tuned = try parse(#"{"coordinator":{"endpoint":"ipc:///x","placement_grace_ms":0},"rebalance":{"moves_at_once":2,"spread":5}}"#)
        #expect(tuned.placementGrace == .zero)
        #expect(tuned.rebalancing == RebalancePolicy(movesAtOnce: 2, spread: 5))
        #expect(try parse(#"{"coordinator":{"endpoint":"ipc:///x"},"rebalance":{"enabled":false}}"#).rebalancing == nil)
    }

    @Test("sessions: on by default with their limits, tunable, or off")
    func sessions() throws {
        #expect(try parse(#"{"coordinator":{"endpoint":"ipc:///x"}}"#).sessions == SessionSettings())
        let tuned = try parse(
            #"{"coordinator":{"endpoint":"ipc:///x"},"sessions":{"idle_timeout_ms":1500,"max_sessions":3,"max_creations_per_second":7}}"#)
        #expect(tuned.sessions == SessionSettings(idleTimeout: .milliseconds(1500), maxSessions: 3, maxCreationsPerSecond: 7))
        #expect(try parse(#"{"coordinator":{"endpoint":"ipc:///x"},"sessions":{"enabled":false}}"#).sessions == nil)
    }

    @Test(
        "invalid documents are rejected with the key and what was expected",
        arguments: [
            (#"{"coordinator":{}}"#, "coordinator.endpoint", "required"),
            (#"{"coordinator":{"endpoint":"localhost:1"}}"#, "coordinator.endpoint", "ZeroMQ endpoint"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"heartbeat":{"interval_ms":-1}}"#, "heartbeat.interval_ms", "positive integer"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"log":{"level":"loud"}}"#, "log.level", "one of"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"security":{"mode":"tls"}}"#, "security.mode", "curve"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"security":{"allow_plaintext_on_network":"yes"}}"#, "security.allow_plaintext_on_network", "true or false"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"security":{"client_public_key":"k"}}"#, "security.client_public_key", "known key"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"workers":[{"name":"a"},{"name":"a"}]}"#, "workers[1].name", "not used"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"workers":[{"name":"a"}],"placement":[{"match":"X","worker":"b"}]}"#, "placement[0].worker", "listed"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"placement":[{"match":"X","pool":"p","strategy":"random"}]}"#, "placement[0].strategy", "hashed"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"placement":[{"match":"X","worker":"b"}]}"#, "placement[0].worker", "none is listed"),
            (#"{"coordinator":{"endpoint":"tcp://127.0.0.1:99999"}}"#, "coordinator.endpoint", "PORT 1-65535"),
            (#"{"coordinator":{"endpoint":"tcp://127.0.0.1"}}"#, "coordinator.endpoint", "ZeroMQ endpoint"),
            (#"{"coordinator":{"endpoint":"ipc://"}}"#, "coordinator.endpoint", "ZeroMQ endpoint"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"heartbeats":{}}"#, "heartbeats", "did you mean \"heartbeat\"?"),
            (#"{"coordinator":{"endpoint":"ipc:///x","placement_grace_ms":-5}}"#, "coordinator.placement_grace_ms", "integer"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"rebalance":{"spread":1}}"#, "rebalance.spread", "at least 2"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"rebalance":{"enabled":"no"}}"#, "rebalance.enabled", "true or false"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"rebalance":{"moves":3}}"#, "rebalance.moves", "known key"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"sessions":{"max_sessions":0}}"#, "sessions.max_sessions", "positive integer"),
            (#"{"coordinator":{"endpoint":"ipc:///x"},"sessions":{"idle_timeout":5}}"#, "sessions.idle_timeout", "did you mean \"idle_timeout_ms\"?"),
            (#"not json"#, "", "JSON object"),
        ])
    func rejected(json: String, key: String, expected: String) {
        let error = rejection(json)
        #expect(error?.file == "test.json")
        #expect(error?.key == key)
        #expect(error?.expected.contains(expected) == true, "\(String(describing: error))")
    }

    @Test("command line beats environment beats file")
    func precedence() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-precedence-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"coordinator":{"endpoint":"ipc:///file","root":"list-detail"},"log":{"level":"info"}}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let environment = ["WORKFLOW_LOG_LEVEL": "debug", "WORKFLOW_COORDINATOR_ENDPOINT": "ipc:///env", "WORKFLOW_WORKER_NAME": "env-worker"]

        let fileOnly = try await ClusterSettings.load(file: file, environment: [:])
        #expect(fileOnly.configuration.log.level == .info)
        #expect(fileOnly.configuration.coordinatorEndpoint == "ipc:///file")
        #expect(fileOnly.workerName == nil)

        let withEnvironment = try await ClusterSettings.load(file: file, environment: environment)
        #expect(withEnvironment.configuration.log.level == .debug)
        #expect(withEnvironment.configuration.coordinatorEndpoint == "ipc:///env")
        #expect(withEnvironment.workerName == "env-worker")

        let withFlags = try await ClusterSettings.load(
            file: file, overrides: ClusterOverrides([.logLevel: "error", .coordinatorEndpoint: "ipc:///flag", .workerName: "flag-worker"]),
            environment: environment)
        #expect(withFlags.configuration.log.level == .error)
        #expect(withFlags.configuration.coordinatorEndpoint == "ipc:///flag")
        #expect(withFlags.workerName == "flag-worker")
    }

    @Test("an invalid override is rejected like an invalid file")
    func invalidOverride() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-override-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"coordinator":{"endpoint":"ipc:///file"}}"#.utf8).write(to: URL(fileURLWithPath: file))
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, overrides: ClusterOverrides([.logFormat: "xml"]), environment: [:])
        }
    }

    @Test("a worker's entry: the file's, with the pool override; an unlisted name or an empty pool is rejected")
    func workerEntry() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wf-entry-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"coordinator":{"endpoint":"ipc:///file"},"workers":[{"name":"w1","pool":"p","capacity":3}]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let settings = try await ClusterSettings.load(file: file, environment: [:])
        #expect(try settings.workerEntry(named: "w1") == WorkerEntry(name: "w1", pool: "p", capacity: 3))
        #expect(throws: ClusterConfigurationError.self) { try settings.workerEntry(named: "w2") }
        let overridden = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_WORKER_POOL": "q"])
        #expect(try overridden.workerEntry(named: "w1").pool == "q")
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, overrides: ClusterOverrides([.workerPool: ""]), environment: [:])
        }
        await #expect(throws: ClusterConfigurationError.self) {
            _ = try await ClusterSettings.load(file: file, environment: ["WORKFLOW_COORDINATOR_ENDPOINT": "tcp://nowhere"])
        }
    }

    @Test("endpoints: tcp host:port (or *), bracketed IPv6, ipc paths are accepted")
    func validEndpoints() {
        for endpoint in ["tcp://127.0.0.1:5570", "tcp://*:5570", "tcp://0.0.0.0:*", "tcp://[::1]:5570", "tcp://coordinator.example:5570", "ipc:///run/wf.sock"] {
            #expect(ClusterEndpoint.isValid(endpoint), "\(endpoint)")
        }
        for endpoint in ["tcp://:5570", "tcp://127.0.0.1:", "tcp://127.0.0.1:-1", "tcp://a b:1", "udp://127.0.0.1:1", "127.0.0.1:5570"] {
            #expect(!ClusterEndpoint.isValid(endpoint), "\(endpoint)")
        }
    }

    @Test("a syntax error is located by line and column (characters, not bytes)")
    func jsonPositions() {
        let cases: [(String, Int, Int, String)] = [
            ("{\n  \"a\": x\n}", 2, 8, "expected a value"),
            ("{\"a\": 1,}", 1, 8, "trailing comma"),
            ("{\"é\": 1 \"b\": 2}", 1, 9, "expected ',' or '}'"),
            ("{\"a\": [1, 2", 1, 12, "ends early"),
            ("{\"a\": \"x\ny\"}", 1, 9, "control character"),
            ("{} {}", 1, 4, "after the document"),
        ]
        for (text, line, column, problem) in cases {
            let position = JSONSyntaxLocator.firstError(in: Array(text.utf8))
            #expect(position?.line == line && position?.column == column, "\(text): \(String(describing: position))")
            #expect(position?.problem.contains(problem) == true, "\(text): \(String(describing: position))")
        }
        #expect(JSONSyntaxLocator.firstError(in: Array(#"{"a": [1, -2.5e3, true, null, "\u00e9"]}"#.utf8)) == nil)
    }

    @Test("log lines: the time carries its zone; JSON metadata logged as numbers or booleans stays typed")
    func logLineFormat() throws {
        let time = Date(timeIntervalSince1970: 1_767_261_600)
        let metadata: Logger.Metadata = ["types": .stringConvertible(2), "ok": .stringConvertible(true), "worker": "7", "ratio": .stringConvertible(0.5)]
        let json = ClusterLogHandler.line(time: time, level: .info, label: "coordinator", node: "coordinator", message: "worker joined", metadata: metadata, format: .json)
        #expect(json.contains(#""types":2"#) && json.contains(#""ok":true"#) && json.contains(#""worker":"7""#) && json.contains(#""ratio":0.5"#), "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let stamp = try #require(object["time"] as? String)
        #expect(stamp.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)/#) != nil, "\(stamp)")
        let text = ClusterLogHandler.line(time: time, level: .info, label: "coordinator", node: "coordinator", message: "worker joined", metadata: metadata, format: .text)
        #expect(text.hasPrefix(stamp + " info coordinator: worker joined"), "\(text)")
    }
}
