import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowClusterTesting
import WorkflowCluster
import ZeroMQ

/// The daemons' logs as an operator reads them: a normal start without `error` lines, every
/// status change once, time stamps with their zone, typed JSON values, a dead worker and a
/// refused or misconfigured worker said in words, and warnings a peer causes rate limited.
@Suite("Operator logs")
struct OperatorLogTests {
    /// `2026-01-01T10:00:00.000+01:00` (or `…Z` in UTC): RFC 3339 with milliseconds and a zone.
    static var timestampWithZone: Regex<(Substring, Substring)> { #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/#}
    /// A zone that is not UTC all year (so the offset must be written as one).
    static let zone = ["TZ": "Europe/Berlin"]

    /// A JSON log line as an object.
    static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// The level of a text log line (its second field).
    static func textLevel(_ line: String) -> String? {
        let fields = line.split(separator: " ", maxSplits: 2)
        return fields.count > 1 ? String(fields[1]) : nil
    }

    @Test("a normal start logs no error: waiting for the first worker is info, each status change once, zones and typed JSON values")
    func normalStart() async throws {
        try await ClusterFixture.with("normal-start") { cluster in
            let coordinator = try cluster.start(
                "test-coordinator", ["--config", cluster.configPath, "--print-renderings", "json", "--log-format", "json"],
                label: "coordinator", environment: Self.zone)
            // The children wait for their workers before any has started: a normal start.
            try await coordinator.stdout.first("the inbox waiting for a worker", where: StatusLine.matching("ListPaneWorkflow", "unavailable"))
            for name in ["worker-1", "worker-2"] {
                let worker = try cluster.start("test-worker", ["--config", cluster.configPath, "--name", name], label: name, environment: Self.zone)
                try await worker.stderr.first("\(name) to be welcomed") { $0.contains("welcomed by the parent") }
            }
            try await coordinator.stdout.first("the tree", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            try await coordinator.stderr.first("the message pane running") {
                $0.contains("child status: running on worker-2")
            }

            let coordinatorLines = coordinator.stderr.lines
            let objects = coordinatorLines.compactMap(Self.object)
            #expect(objects.count == coordinatorLines.count, "every coordinator line is a JSON object:\n\(coordinatorLines.joined(separator: "\n"))")
            for object in objects {
                #expect(!["error", "critical"].contains(object["level"] as? String), "\(object)")
                let time = object["time"] as? String ?? ""
                #expect(time.wholeMatch(of: Self.timestampWithZone) != nil && !time.hasSuffix("Z"), "time \(time) has no zone offset")
            }
            // The first worker's arrival was awaited at info, and that status logged once.
            let statuses = objects.filter { ($0["message"] as? String)?.hasPrefix("child status: ") == true }
            let waiting = statuses.filter { ($0["message"] as? String)?.contains("unavailable: no worker hosts RemoteTestSupport.ListPaneWorkflow") == true }
            #expect(!waiting.isEmpty && waiting.allSatisfy { $0["level"] as? String == "info" }, "\(statuses)")
            for path in Set(statuses.compactMap { $0["path"] as? String }) {
                let messages = statuses.filter { $0["path"] as? String == path }.compactMap { $0["message"] as? String }
                for (earlier, later) in zip(messages, messages.dropFirst()) {
                    #expect(earlier != later, "a status change of \(path) logged twice in a row: \(messages)")
                }
            }
            #expect(!coordinatorLines.contains { $0.contains("remote child unavailable") }, "a status change logged a second time")
            // Numbers are JSON numbers.
            let joined = try #require(objects.first { $0["message"] as? String == "worker joined" })
            #expect(joined["types"] is NSNumber && !(joined["types"] is String), "\(joined)")
            #expect(coordinatorLines.contains { $0.contains(#""message":"worker joined""#) && $0.contains(#/"types":\d+[,}]/#) })

            for name in ["worker-1", "worker-2"] {
                let lines = try #require(cluster.daemon(labelled: name)).stderr.lines
                for line in lines {
                    #expect(!["error", "critical"].contains(Self.textLevel(line)), "\(name): \(line)")
                    let stamp = String(line.prefix { $0 != " " })
                    #expect(stamp.wholeMatch(of: Self.timestampWithZone) != nil && !stamp.hasSuffix("Z"), "\(name): \(line)")
                }
            }
        }
    }

    @Test("a stopped worker is reported in words: 'worker-2 stopped answering (no heartbeat for 0.5 s)', not an errno")
    func deadWorkerInWords() async throws {
        try await ClusterFixture.with("dead-worker") { cluster in
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("worker-1")
            let worker2 = try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("the tree", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            let statusesBefore = coordinator.stdout.count
            kill(worker2.pid, SIGSTOP)
            defer { worker2.forceKill() }
            let expected = "worker-2 stopped answering (no heartbeat for 0.5 s)"
            try await coordinator.stderr.first("the departure in words") { $0.contains("worker left: \(expected)") }
            let status = try await coordinator.stdout.first(
                "the message pane's status", from: statusesBefore, where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
            #expect(status.contains(expected), "\(status)")
            try await coordinator.stderr.first("the status change logged as a warning") {
                $0.contains("warning coordinator: child status: unavailable: \(expected)")
            }
            #expect(!coordinator.stderr.lines.contains { $0.contains("ZMQError") }, "\(coordinator.stderr.lines)")
        }
    }

    /// Lines before the first summary of `kind` that report `kind` itself (not the summary).
    static func linesBeforeSummary(of kind: String, in lines: [String]) -> Int? {
        guard let summary = lines.firstIndex(where: { $0.contains("more warnings suppressed") && $0.contains(kind) }) else { return nil }
        return lines[..<summary].filter { $0.contains(kind) }.count
    }

    @Test("a worker refused by the allow-list says so in its own log; both sides' warnings are rate limited")
    func refusedWorkerSaysSo() async throws {
        try await ClusterFixture.with("refused-says-so") { cluster in
            try await ClusterSecurityTests.keygen(cluster)
            let keys = cluster.keysDirectory
            let listed = try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-1.pub")
            let unlisted = try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-2.pub")
            try Data("\(listed.z85)\n".utf8).write(to: URL(fileURLWithPath: "\(keys)/allowed-workers"))
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            let coordinator = try await cluster.startCoordinator()
            let worker2 = try cluster.start("test-worker", ["--config", cluster.configPath, "--name", "worker-2"], label: "worker-2")
            let refusal = try await worker2.stderr.first("worker-2's own account of its refusal") {
                $0.contains("the parent refused this worker at the CURVE handshake")
            }
            #expect(refusal.contains("allow-list") && refusal.contains(unlisted.z85) && refusal.contains(" error "), "\(refusal)")
            // libzmq does not retry a connection whose key was refused; the worker does, with
            // back-off, and is refused again.
            let refusedKind = "refused a worker whose key is not allowed"
            try await coordinator.stderr.first("the coordinator refusing the retry") { _ in
                coordinator.stderr.lines.filter { $0.contains(refusedKind) }.count >= 2
            }
            #expect(!worker2.stderr.lines.contains { $0.contains("cannot send") || $0.contains("is silent") }, "\(worker2.stderr.lines)")
            #expect(!worker2.stderr.lines.contains { $0.contains("welcomed by the parent") })
            #expect(worker2.isRunning)
        }
    }

    @Test("refusals of keys not on the allow-list are rate limited: at most 10 lines per 5 s, then a count")
    func refusalsRateLimited() async throws {
        try await ClusterFixture.with("refusals-limited") { cluster in
            try await ClusterSecurityTests.keygen(cluster)
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            let coordinator = try await cluster.startCoordinator()
            let serverKey = try CurveKeyFiles.publicKey(file: "\(cluster.keysDirectory)/coordinator.pub")
            let refusedKind = "refused a worker whose key is not allowed"
            let summary: @Sendable (String) -> Bool = { $0.contains("more warnings suppressed") && $0.contains(refusedKind) }
            // 30 peers with unlisted keys, one after the other (each refused before the next);
            // when the window of the first ends, the coordinator reports the ones it suppressed.
            let context = try ZMQContext()
            defer { context.shutdown() }
            for _ in 0..<30 {
                let peer = try ZMQSocket(.dealer, context: context)
                defer { peer.close() }
                try peer.set(.linger, 0)
                let keys = try CurveKeyPair.generate()
                try peer.set(.curveServerKey, serverKey)
                try peer.set(.curvePublicKey, keys.publicKey)
                try peer.set(.curveSecretKey, keys.secretKey)
                let monitor = try ZMQSocketMonitor(monitoring: peer, events: [.handshakeFailedAuthentication])
                defer { monitor.stop() }
                try peer.connect(cluster.endpoint)
                _ = try monitor.waitFor(.handshakeFailedAuthentication, timeout: .seconds(10))
            }
            try await coordinator.stderr.first("the coordinator's count of suppressed refusals", where: summary)
            let count = try #require(Self.linesBeforeSummary(of: refusedKind, in: coordinator.stderr.lines))
            #expect((1...10).contains(count), "\(count) refusals logged in the first window")
            #expect(coordinator.isRunning)
        }
    }

    @Test("a worker given the wrong server key says so in its own log; the coordinator's handshake warnings are rate limited")
    func wrongServerKeySaysSo() async throws {
        try await ClusterFixture.with("wrong-server-key") { cluster in
            try await ClusterSecurityTests.keygen(cluster)
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, security: ClusterFixture.curveSecurity())
            // Another cluster's keys: worker-2 trusts that coordinator's public key instead.
            let otherKeys = cluster.directory.appendingPathComponent("other-keys").path
            let keygen = try cluster.start("test-coordinator", ["keygen", "--dir", otherKeys, "--workers", "worker-2"], label: "keygen")
            #expect(try await keygen.waitForExit() == 0)
            var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cluster.configPath))) as? [String: Any])
            var security = try #require(document["security"] as? [String: Any])
            security["server_public_key"] = "\(otherKeys)/coordinator.pub"
            document["security"] = security
            let wrongConfig = cluster.directory.appendingPathComponent("wrong-server-key.json").path
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: wrongConfig))

            let coordinator = try await cluster.startCoordinator()
            let worker2 = try cluster.start("test-worker", ["--config", wrongConfig, "--name", "worker-2"], label: "worker-2")
            let failure = try await worker2.stderr.first("worker-2's own account of the failed handshake") {
                $0.contains("the handshake with the parent failed")
            }
            #expect(failure.contains("server_public_key") && failure.contains(" error "), "\(failure)")
            let kind = "a peer failed the CURVE handshake"
            try await coordinator.stderr.first("the coordinator's summary") { $0.contains("more warnings suppressed") && $0.contains(kind) }
            let count = try #require(Self.linesBeforeSummary(of: kind, in: coordinator.stderr.lines))
            #expect((1...10).contains(count), "\(count) failed handshakes logged in the first window")
            #expect(!worker2.stderr.lines.contains { $0.contains("welcomed by the parent") })
        }
    }

    @Test("a worker's first connection over a slow link is not abandoned: no reconnection before it is welcomed")
    func slowFirstConnection() async throws {
        try await ClusterFixture.with("slow-link") { cluster in
            // Window 200 ms × 5 (+ one interval of back-off): 1.2 s. Through a proxy holding every
            // chunk 300 ms each way the handshake and HELLO take at least three round trips
            // (1.8 s), so a worker counting silence from its start abandons the connection.
            try cluster.writeConfig(placement: ClusterFixture.demoPlacement, endpoint: "tcp://127.0.0.1:*", heartbeat: ["interval_ms": 200, "liveness": 5])
            let coordinator = try await cluster.startCoordinator()
            let listening = try await coordinator.stdout.first("the bound endpoint") { $0.contains(#""event":"listening""#) }
            let endpoint = try #require(Self.object(listening)?["endpoint"] as? String)
            let target = String(endpoint.dropFirst("tcp://".count))
            let script = try #require(repositoryFolder(holding: "scripts/netlab-delay.pl", from: #filePath)).appendingPathComponent("scripts/netlab-delay.pl").path
            let proxy = try cluster.start("/usr/bin/perl", [script, "0", target, "300", "0", "127.0.0.1"], label: "delay proxy")
            let proxyLine = try await proxy.stdout.first("the proxy to listen") { $0.hasPrefix("listening ") }
            let proxyPort = try #require(Int(proxyLine.dropFirst("listening ".count)))
            let worker = try cluster.start(
                "test-worker", ["--config", cluster.configPath, "--name", "worker-1", "--endpoint", "tcp://127.0.0.1:\(proxyPort)"],
                label: "worker-1")
            try await worker.stderr.first("worker-1 to be welcomed over the slow link") { $0.contains("welcomed by the parent") }
            #expect(!worker.stderr.lines.contains { $0.contains("reconnecting") }, "\(worker.stderr.lines.joined(separator: "\n"))")
            #expect(coordinator.stderr.lines.filter { $0.contains("worker joined") && $0.contains("worker=worker-1") }.count == 1)
            #expect(!coordinator.stderr.lines.contains { $0.contains("worker left") })
        }
    }
}
