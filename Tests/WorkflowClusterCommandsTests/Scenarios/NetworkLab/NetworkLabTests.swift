import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// The daemons across hosts of a network lab (`scripts/netlab.sh`: network namespaces joined by
/// a bridge, faults by nftables, latency by a delay proxy), over tcp with CURVE as shipped.
///
/// Events are the coordinator's scripted selections (`--picks`, see `SelectionScript`):
/// each goes to the list pane on its worker, comes back as the list's output and becomes the
/// root's state, then the detail pane's props on worker-2. The frames the coordinator prints
/// show every step, so each test checks that every selection took effect exactly once, in order.
/// Needs root, iproute2 and nftables (`scripts/netlab.sh check`); skipped otherwise.
@Suite("Network lab", .serialized, .enabled(if: NetLab.availability.available, NetLab.skipReason))
struct NetworkLabTests {
    /// Longer than any test needs: a test interrupts the demo with SIGTERM once it has seen
    /// enough (a script run to its end fails the wait for more selections).
    static let longScript = 50_000
    /// Selections each test waits for after a fault is healed.
    static let afterHeal = 200
    /// Added to a heartbeat window to bound detection on a loaded machine.
    static let detectionSlack: Duration = .seconds(5)

    /// The worker the coordinator's status lines last showed the list pane running on.
    static func inboxWorker(_ coordinator: DaemonProcess, from start: Int = 0) async throws -> String {
        let line = try await coordinator.stdout.first("the list pane running", from: start, where: StatusLine.matching("ListPaneWorkflow", "running"))
        return try JSONDecoder().decode(StatusLine.self, from: Data(line.utf8)).detail
    }

    /// Starts the coordinator with the long script and the three workers; waits until the demo
    /// has made `warmUp` selections. Returns the coordinator and the workers by name.
    static func startCluster(_ cluster: LabCluster, warmUp: Int = 50, extra: [String] = []) async throws
        -> (DaemonProcess, [String: DaemonProcess])
    {
        try await cluster.keygen()
        let coordinator = try await cluster.startCoordinator(
            ["--picks", SelectionScript.argument(longScript), "--keep-serving"] + extra)
        var workers: [String: DaemonProcess] = [:]
        for name in ["worker-1", "worker-2", "worker-3"] { workers[name] = try cluster.startWorker(name) }
        try await coordinator.waitForSelections(warmUp, from: 0, "before the fault")
        return (coordinator, workers)
    }

    /// Checks the frames: the selections they show are a prefix of the script (none lost, none
    /// applied twice, none out of order); returns how many there were.
    @discardableResult
    static func expectEveryEventOnce(_ coordinator: DaemonProcess, _ what: String) -> Int {
        let shown = SelectionScript.shown(in: coordinator.stdout.lines)
        let intact = SelectionScript.intactPrefix(of: shown)
        #expect(
            intact == shown.count,
            "\(what): selection \(intact + 1) of the script shows \(shown.dropFirst(intact).prefix(5)), expected \(SelectionScript.selections(intact + 5).suffix(5))"
        )
        // The root's state is never lost: once a selection was made, every frame shows one.
        let frames = coordinator.stdout.lines.compactMap(ListDetailFrame.parse)
        let firstSelected = frames.firstIndex { $0.detail.id != nil } ?? frames.endIndex
        #expect(frames[firstSelected...].allSatisfy { $0.detail.id != nil }, "\(what): the selection was reset")
        return shown.count
    }

    /// Whether a line of the coordinator's log reports `worker` gone.
    static func departure(of worker: String) -> @Sendable (String) -> Bool {
        { $0.contains("worker left") && $0.contains("worker=\(worker)") }
    }

    /// Whether a line of the coordinator's log reports `worker` joining.
    static func join(of worker: String) -> @Sendable (String) -> Bool {
        { $0.contains("worker joined") && $0.contains("worker=\(worker)") }
    }

    /// Whether a line is a frame of the whole tree, each pane rendered on a worker of its rule.
    static let treeOnWorkers: @Sendable (String) -> Bool = { line in
        guard let frame = ListDetailFrame.parse(line) else { return false }
        return ["worker-1", "worker-3"].contains(frame.list.renderedBy) && frame.detail.renderedBy == "worker-2"
            && !frame.list.ids.isEmpty
    }

    /// Checks that `worker` never took the coordinator for dead (quoting the log line if it did).
    static func expectNeverSilent(_ worker: DaemonProcess) {
        let silent = worker.stderr.lines.filter { $0.contains("the parent is silent") }
        #expect(silent.isEmpty, "\(worker.label) took the coordinator for dead: \(silent)")
    }

    /// The coordinator's log lines reporting a departure, for a failure message.
    static func departures(_ coordinator: DaemonProcess) -> [String] {
        coordinator.stderr.lines.filter { $0.contains("worker left") }
    }

    /// SIGTERM the coordinator (it ends the demo cleanly and exits 0), then the workers.
    static func stop(_ coordinator: DaemonProcess, _ workers: [String: DaemonProcess]) async throws {
        #expect(try await coordinator.terminate() == 0)
        try await terminateAll(workers.sorted(by: { $0.key < $1.key }).map(\.value))
    }

    /// SIGTERM every worker at once, then waits for each to exit 0. (One after the other, a worker
    /// draining towards the coordinator that has just stopped waits for its silence, up to the
    /// liveness window, and the workers not yet signalled would notice that silence meanwhile.)
    static func terminateAll(_ workers: [DaemonProcess]) async throws {
        for worker in workers where worker.isRunning { kill(worker.pid, SIGTERM) }
        for worker in workers { #expect(try await worker.waitForExit() == 0) }
    }

    // MARK: Partitions

    @Test("a worker partitioned for 0.5 s: nothing fails over, the events wait and resume, each applied once")
    func shortPartition() async throws {
        let heartbeat = LabCluster.Heartbeat.tolerant
        try await LabCluster.with("short", heartbeat: heartbeat) { cluster in
            let (coordinator, workers) = try await Self.startCluster(cluster)
            let victim = try await Self.inboxWorker(coordinator)
            try await cluster.lab.cut(victim)
            try await Task.sleep(for: .milliseconds(500))  // the fault itself
            let healLine = coordinator.stdout.count
            // The cut was real: it dropped the heartbeats and events of those 0.5 s.
            let dropped = try await cluster.lab.heal(victim)
            try await coordinator.waitForSelections(Self.afterHeal, from: healLine, "after the heal")
            try await Self.stop(coordinator, workers)

            #expect(dropped > 0, "the cut dropped nothing")
            #expect(Self.departures(coordinator).isEmpty, "\(Self.departures(coordinator))")
            #expect(!coordinator.stdout.lines.contains(where: StatusLine.matching("", "unavailable")))
            for worker in workers.values { Self.expectNeverSilent(worker) }
            let frames = coordinator.stdout.lines.compactMap(ListDetailFrame.parse).filter { !$0.list.ids.isEmpty }
            #expect(frames.allSatisfy { $0.list.renderedBy == victim }, "the list pane moved")
            let count = Self.expectEveryEventOnce(coordinator, "0.5 s partition")
            labFigure(
                "partition 0.5 s of \(victim) (heartbeat \(heartbeat)): \(dropped) frames dropped, no failover; \(count) selections, "
                    + "lost 0, applied twice 0")
        }
    }

    /// Partitions `victim(coordinator)` for `duration` with a quick heartbeat; checks detection,
    /// the rejoin after the heal and the events. `moves`: the victim hosts the inbox (its pool
    /// has another worker, which takes it); otherwise the victim is worker-2 and the message pane
    /// waits, unavailable, for it.
    func partition(for duration: Duration, moves: Bool) async throws {
        let heartbeat = LabCluster.Heartbeat.quick
        try await LabCluster.with("part\(duration.components.seconds)", heartbeat: heartbeat) { cluster in
            let (coordinator, workers) = try await Self.startCluster(cluster)
            let inboxWorker = try await Self.inboxWorker(coordinator)
            let victim = moves ? inboxWorker : "worker-2"
            let cutLog = coordinator.stderr.count
            let cutLine = coordinator.stdout.count
            let cutAt = ContinuousClock.now
            try await cluster.lab.cut(victim)
            try await coordinator.stderr.first("the partition of \(victim) detected", from: cutLog, where: Self.departure(of: victim))
            let detection = ContinuousClock.now - cutAt
            let survivor: String?
            if moves {
                survivor = try await Self.inboxWorker(coordinator, from: cutLine)
                #expect(survivor != victim)
                // The moved list pane serves while its old worker is cut off.
                try await coordinator.waitForSelections(Self.afterHeal, from: cutLine, "while \(victim) is cut off")
            } else {
                survivor = nil
                try await coordinator.stdout.first("the detail pane unavailable", from: cutLine, where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
            }
            let remaining = duration - (ContinuousClock.now - cutAt)
            if remaining > .zero { try await Task.sleep(for: remaining) }  // the fault itself
            let healLog = coordinator.stderr.count
            let healLine = coordinator.stdout.count
            let healAt = ContinuousClock.now
            try await cluster.lab.heal(victim)
            try await coordinator.stderr.first("\(victim) to rejoin", from: healLog, where: Self.join(of: victim))
            let rejoin = ContinuousClock.now - healAt
            if !moves {
                try await coordinator.stdout.first("the detail pane back on worker-2", from: healLine, where: StatusLine.matching("DetailPaneWorkflow", "running"))
            }
            try await coordinator.waitForSelections(Self.afterHeal, from: healLine, "after the heal")
            try await Self.stop(coordinator, workers)

            #expect(detection < heartbeat.window + Self.detectionSlack, "detected after \(detection)")
            #expect(workers[victim]?.stderr.lines.contains { $0.contains("the parent is silent") } == true)
            if let survivor {
                // One live copy: once moved, the list pane never again renders from the cut worker.
                let frames = coordinator.stdout.lines[cutLine...].compactMap(ListDetailFrame.parse).filter { !$0.list.ids.isEmpty }
                let firstMoved = frames.firstIndex { $0.list.renderedBy == survivor } ?? frames.endIndex
                #expect(frames[firstMoved...].allSatisfy { $0.list.renderedBy == survivor }, "the old copy rendered again")
                #expect(firstMoved < frames.endIndex)
            }
            let count = Self.expectEveryEventOnce(coordinator, "\(duration) partition")
            labFigure(
                "partition \(seconds(duration)) of \(victim) (heartbeat \(heartbeat)): detected in \(seconds(detection)), "
                    + (moves ? "list pane moved to \(survivor ?? "?")" : "detail pane unavailable")
                    + ", rejoined \(seconds(rejoin)) after the heal; \(count) selections, lost 0, applied twice 0")
        }
    }

    @Test("the detail pane's worker partitioned for 2 s: detected, the pane unavailable, back on its worker after the heal, each event once")
    func twoSecondPartition() async throws {
        try await partition(for: .seconds(2), moves: false)
    }

    @Test("the list pane's worker partitioned for 10 s: detected, the list pane moved and serving, the old worker rejoins, each event once")
    func tenSecondPartition() async throws {
        try await partition(for: .seconds(10), moves: true)
    }

    @Test("a one-way cut is noticed by both sides, the child moves, the worker rejoins after the heal, each event once", arguments: ["out", "in"])
    func oneWayCut(direction: String) async throws {
        let heartbeat = LabCluster.Heartbeat.quick
        try await LabCluster.with("oneway-\(direction)", heartbeat: heartbeat) { cluster in
            let (coordinator, workers) = try await Self.startCluster(cluster)
            let victim = try await Self.inboxWorker(coordinator)
            let cutLog = coordinator.stderr.count
            let victimLog = workers[victim]?.stderr.count ?? 0
            let cutLine = coordinator.stdout.count
            let cutAt = ContinuousClock.now
            try await cluster.lab.cut(victim, direction)
            // The cut lasts until both sides noticed it: the coordinator lost the worker, the
            // worker lost the coordinator.
            try await coordinator.stderr.first("the coordinator to notice", from: cutLog, where: Self.departure(of: victim))
            let coordinatorNoticed = ContinuousClock.now - cutAt
            try await workers[victim]?.stderr.first("\(victim) to notice", from: victimLog) { $0.contains("the parent is silent") }
            let workerNoticed = ContinuousClock.now - cutAt
            let survivor = try await Self.inboxWorker(coordinator, from: cutLine)
            let healLog = coordinator.stderr.count
            let healLine = coordinator.stdout.count
            let healAt = ContinuousClock.now
            try await cluster.lab.heal(victim)
            try await coordinator.stderr.first("\(victim) to rejoin", from: healLog, where: Self.join(of: victim))
            let rejoin = ContinuousClock.now - healAt
            try await coordinator.waitForSelections(Self.afterHeal, from: healLine, "after the heal")
            try await Self.stop(coordinator, workers)

            #expect(survivor != victim)
            #expect(coordinatorNoticed < heartbeat.window * 2 + Self.detectionSlack, "the coordinator noticed after \(coordinatorNoticed)")
            let count = Self.expectEveryEventOnce(coordinator, "one-way cut (\(direction))")
            let what = direction == "out" ? "\(victim) → coordinator" : "coordinator → \(victim)"
            labFigure(
                "one-way cut \(what) (heartbeat \(heartbeat)): coordinator noticed in \(seconds(coordinatorNoticed)), worker in "
                    + "\(seconds(workerNoticed)), list pane moved to \(survivor), rejoined \(seconds(rejoin)) after the heal; "
                    + "\(count) selections, lost 0, applied twice 0")
        }
    }

    // MARK: Latency and loss

    @Test("50 ms ± 10 ms round trip through a delay proxy: no worker is taken for dead, every event once")
    func latency() async throws {
        let heartbeat = LabCluster.Heartbeat.quick
        try await LabCluster.with("latency", heartbeat: heartbeat) { cluster in
            try await cluster.keygen()
            let proxyPort = LabCluster.port + 1
            let (command, arguments) = cluster.lab.delayProxy(
                on: "coordinator", port: proxyPort, target: "\(cluster.coordinatorAddress):\(LabCluster.port)", meanMilliseconds: 25,
                jitterMilliseconds: 5)
            let proxy = try cluster.fixture.start(command, arguments, label: "delay proxy")
            try await proxy.stdout.first("the delay proxy to listen") { $0.hasPrefix("listening") }
            let selections = 100
            let coordinator = try await cluster.startCoordinator(["--picks", SelectionScript.argument(selections)])
            let startedAt = ContinuousClock.now
            // Every worker reaches the coordinator only through the proxy.
            let viaProxy = ["--endpoint", "tcp://\(cluster.coordinatorAddress):\(proxyPort)"]
            let workers = try ["worker-1", "worker-2", "worker-3"].map { try cluster.startWorker($0, viaProxy) }
            #expect(try await coordinator.waitForExit() == 0)
            let elapsed = ContinuousClock.now - startedAt
            try await Self.terminateAll(workers)

            #expect(Self.departures(coordinator).isEmpty, "\(Self.departures(coordinator))")
            #expect(!coordinator.stdout.lines.contains(where: StatusLine.matching("", "unavailable")))
            for worker in workers { Self.expectNeverSilent(worker) }
            #expect(SelectionScript.shown(in: coordinator.stdout.lines) == SelectionScript.selections(selections))
            labFigure(
                "latency 50 ms ± 10 ms round trip (heartbeat \(heartbeat)): no false detection; \(selections) selections in "
                    + "\(seconds(elapsed)) from the coordinator's start (\(Int(milliseconds(elapsed) / Double(selections))) ms each), lost 0, applied twice 0")
        }
    }

    @Test("5% of the coordinator's frames lost each way: the cluster stays up, every event once")
    func loss() async throws {
        let heartbeat = LabCluster.Heartbeat.lossy
        try await LabCluster.with("loss", heartbeat: heartbeat) { cluster in
            try await cluster.keygen()
            try await cluster.lab.loss("coordinator", percent: 5)
            let selections = 300
            let coordinator = try await cluster.startCoordinator(["--picks", SelectionScript.argument(selections)])
            let startedAt = ContinuousClock.now
            let workers = try ["worker-1", "worker-2", "worker-3"].map { try cluster.startWorker($0) }
            #expect(try await coordinator.waitForExit() == 0)
            let elapsed = ContinuousClock.now - startedAt
            let dropped = try await cluster.lab.dropped("coordinator")
            try await Self.terminateAll(workers)

            #expect(dropped > 0, "the loss rule dropped nothing")
            #expect(Self.departures(coordinator).isEmpty, "\(Self.departures(coordinator))")
            #expect(!coordinator.stdout.lines.contains(where: StatusLine.matching("", "unavailable")))
            for worker in workers { Self.expectNeverSilent(worker) }
            #expect(SelectionScript.shown(in: coordinator.stdout.lines) == SelectionScript.selections(selections))
            labFigure(
                "loss 5% each way at the coordinator (heartbeat \(heartbeat)): \(dropped) frames dropped, stayed up; \(selections) selections in \(seconds(elapsed)), "
                    + "lost 0, applied twice 0")
        }
    }

    @Test("a worker's first connection over 50 ms round trips with 10% loss is not abandoned: welcomed without reconnecting")
    func slowLossyFirstConnection() async throws {
        // The shipped heartbeat: 250 ms × 4. A worker that counted its parent's silence from its
        // own start gave up on the connection after 1.25 s, before a CURVE handshake over this
        // link (SYN, greeting, four CURVE commands, each segment lost one time in ten) was done.
        let heartbeat = LabCluster.Heartbeat(intervalMilliseconds: 250, liveness: 4)
        try await LabCluster.with("firstconn", heartbeat: heartbeat) { cluster in
            try await cluster.keygen()
            let proxyPort = LabCluster.port + 1
            let (command, arguments) = cluster.lab.delayProxy(
                on: "coordinator", port: proxyPort, target: "\(cluster.coordinatorAddress):\(LabCluster.port)", meanMilliseconds: 25,
                jitterMilliseconds: 0)
            let proxy = try cluster.fixture.start(command, arguments, label: "delay proxy")
            try await proxy.stdout.first("the delay proxy to listen") { $0.hasPrefix("listening") }
            let coordinator = try await cluster.startCoordinator()
            try await cluster.lab.loss("worker-1", percent: 10)
            let worker = try cluster.startWorker("worker-1", ["--endpoint", "tcp://\(cluster.coordinatorAddress):\(proxyPort)"])
            let welcomed = try await worker.stderr.first("worker-1 to be welcomed") { $0.contains("welcomed by the parent") }
            let dropped = try await cluster.lab.dropped("worker-1")
            let beforeWelcome = worker.stderr.lines.prefix { $0 != welcomed }
            #expect(!beforeWelcome.contains { $0.contains("reconnecting") }, "\(beforeWelcome.joined(separator: "\n"))")
            #expect(coordinator.stderr.lines.filter(Self.join(of: "worker-1")).count == 1, "\(coordinator.stderr.lines)")
            labFigure("first connection, 25 ms each way and 10% loss at the worker (heartbeat \(heartbeat)): welcomed without reconnecting; \(dropped) frames dropped")
        }
    }

    // MARK: Coordinator failover

    @Test("the coordinator SIGKILLed and restarted with --restore on another host: the running workers rejoin, the tree is back")
    func coordinatorMovesHost() async throws {
        let heartbeat = LabCluster.Heartbeat.quick
        // The workers know one address; it floats from the coordinator's host to the standby's.
        let service = "198.18.0.100"
        try await LabCluster.with("restore", serviceAddress: service, heartbeat: heartbeat) { cluster in
            let file = cluster.fixture.directory.appendingPathComponent("root.snapshot").path
            let (first, workers) = try await Self.startCluster(
                cluster, warmUp: 300, extra: ["--snapshot-file", file, "--snapshot-interval-ms", "100"])
            try await withSafetyTimeout("a periodic snapshot holding a selection") {
                while try ClusterSnapshotTests.selection(inSnapshot: file) == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            first.forceKill()
            // Selections sent to the inbox and not acknowledged yet are kept with the inbox's
            // state and sent again on restore: the restored tree ends on the last of them.
            let restored = try ClusterSnapshotTests.restoredSelections(inSnapshot: file)
            let saved = try #require(restored.last)
            try await cluster.lab.move(service, to: "standby")

            let selections = 100
            let restartAt = ContinuousClock.now
            let second = try await cluster.startCoordinator(
                on: "standby", ["--restore", file, "--picks", SelectionScript.argument(selections)], label: "coordinator (standby)")
            try await withSafetyTimeout("every worker to rejoin") {
                for name in ["worker-1", "worker-2", "worker-3"] {
                    try await second.stderr.first("\(name) to rejoin", where: Self.join(of: name))
                }
            }
            let rejoin = ContinuousClock.now - restartAt
            #expect(try await second.waitForExit() == 0)
            try await Self.terminateAll(Array(workers.values))

            // The tree is back from the snapshot: the first complete frame shows the saved
            // selection, rendered by the workers; then the new script runs, each event once.
            let frames = second.stdout.lines.compactMap(ListDetailFrame.parse)
            let firstComplete = try #require(frames.first { !$0.list.ids.isEmpty && $0.detail.renderedBy == "worker-2" })
            #expect(firstComplete.detail.id.map(restored.contains) == true, "first complete frame: \(firstComplete.detail.id.map(String.init) ?? "none"), restored: \(restored)")
            #expect(["worker-1", "worker-3"].contains(firstComplete.list.renderedBy))
            // Frames may show the recorded selection before the kept ones take effect (the
            // message pane renders each on its worker); from the last one on, the new script.
            let shown = SelectionScript.shown(in: second.stdout.lines)
            let lastRestored = try #require(shown.firstIndex(of: saved), "the restored selection \(saved) never shown: \(shown)")
            #expect(shown[..<lastRestored].allSatisfy(restored.contains), "before the restored selection: \(shown[..<lastRestored])")
            var expected = [saved]
            for id in SelectionScript.selections(selections) where expected.last != id { expected.append(id) }
            #expect(Array(shown[lastRestored...]) == expected)
            #expect(second.stderr.lines.contains { $0.contains("restoring the root from a snapshot") })
            labFigure(
                "coordinator SIGKILL, restarted with --restore on another host (heartbeat \(heartbeat)): all 3 workers rejoined "
                    + "\(seconds(rejoin)) after the restart; selection \(saved) restored; \(selections) more selections, lost 0, applied twice 0")
        }
    }

    // MARK: Security on a network address

    @Test("plaintext on a network address is refused by both daemons unless explicitly allowed")
    func plaintextRefused() async throws {
        try await LabCluster.with("plaintext", heartbeat: .quick) { cluster in
            try cluster.writeConfig(heartbeat: .quick, security: ["mode": "plaintext"])
            let coordinator = try cluster.start("test-coordinator", on: "coordinator", ["--config", cluster.fixture.configPath], label: "coordinator")
            // A configuration error (78): a supervisor must not restart into the same refusal.
            #expect(try await coordinator.waitForExit() == 78)
            let worker = try cluster.startWorker("worker-1")
            #expect(try await worker.waitForExit() == 78)
            for daemon in [coordinator, worker] {
                let log = daemon.stderr.lines.joined(separator: "\n")
                #expect(log.contains("refusing plaintext on the network address \(cluster.endpoint)"), "\(daemon.label): \(log)")
            }

            // The same cluster, plaintext allowed explicitly, runs: the refusal was the address's.
            try cluster.writeConfig(heartbeat: .quick, security: ["mode": "plaintext", "allow_plaintext_on_network": true])
            let allowed = try await cluster.startCoordinator()
            for name in ["worker-1", "worker-2", "worker-3"] { try cluster.startWorker(name) }
            try await allowed.stdout.first("the tree over plaintext", where: Self.treeOnWorkers)
            try await allowed.stderr.first("the coordinator to log its security mode") { $0.contains("security=plaintext") }
        }
    }

    @Test("a worker whose key is not on the allow-list never joins across the network; the others serve")
    func unlistedWorkerNeverJoins() async throws {
        try await LabCluster.with("unlisted", heartbeat: .quick) { cluster in
            try await cluster.keygen()
            let keys = cluster.fixture.keysDirectory
            let unlisted = try CurveKeyFiles.publicKey(file: "\(keys)/workers/worker-3.pub")
            let allowList = try String(contentsOfFile: "\(keys)/allowed-workers", encoding: .utf8)
            let kept = allowList.split(separator: "\n").filter { !$0.contains(unlisted.z85) }.joined(separator: "\n")
            try Data((kept + "\n").utf8).write(to: URL(fileURLWithPath: "\(keys)/allowed-workers"))

            let coordinator = try await cluster.startCoordinator()
            let listed = try ["worker-1", "worker-2"].map { try cluster.startWorker($0) }
            try await coordinator.stdout.first("the tree on the listed workers", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
            let worker3 = try cluster.startWorker("worker-3")
            // Refused (and told so: its own log says it), it retries on a fresh connection with
            // back-off and is refused again: wait for two refusals, then check it never got in.
            let refusal: @Sendable (String) -> Bool = { $0.contains("refused a worker whose key is not allowed") && $0.contains(unlisted.z85) }
            let first = try await coordinator.stderr.first("worker-3's key refused", where: refusal)
            let firstIndex = coordinator.stderr.lines.firstIndex(of: first) ?? 0
            try await worker3.stderr.first("worker-3 to say it was refused") { $0.contains("the parent refused this worker at the CURVE handshake") }
            try await worker3.stderr.first("worker-3 to try again") { $0.contains("connecting to the parent again after a failed handshake") }
            try await coordinator.stderr.first("worker-3's key refused again", from: firstIndex + 1, where: refusal)

            #expect(worker3.isRunning)
            #expect(!worker3.stderr.lines.contains { $0.contains("welcomed by the parent") })
            #expect(!coordinator.stderr.lines.contains(where: Self.join(of: "worker-3")))
            #expect(!coordinator.stdout.lines.contains { ($0.contains("worker-3")) && $0.contains(#""event":"status""#) })
            for worker in listed { #expect(worker.isRunning) }
        }
    }
}
