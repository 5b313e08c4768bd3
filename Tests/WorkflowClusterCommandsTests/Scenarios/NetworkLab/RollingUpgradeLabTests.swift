import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowCluster
import WorkflowClusterTesting
import WorkflowRemote

/// A rolling upgrade of the workers across the lab's hosts (docs/OPERATIONS.md, "Upgrading a
/// cluster"), in the network lab suite (its traits: serialized, skipped where no lab can be made).
extension NetworkLabTests {
    /// The three workers in one pool, which holds the six ledgers of the root `ledger-board`.
    static let ledgerWorkers: [ClusterFixture.Rule] = ["worker-1", "worker-2", "worker-3"].map { ["name": $0, "pool": "ledgers"] }
    static let ledgerPlacement: [ClusterFixture.Rule] = [["match": "RemoteTestSupport.Ledger", "pool": "ledgers"]]
    /// Events each phase of the upgrade waits to see accepted before it goes on.
    static let eventsPerPhase = 60

    @Test(
        "three workers upgraded one at a time (drain, then the next build: a newer protocol, a state version that added a field) under a steady event stream: each event applied once, no child unavailable, every ledger migrated"
    )
    func rollingUpgrade() async throws {
        let heartbeat = LabCluster.Heartbeat.tolerant
        let names = ["worker-1", "worker-2", "worker-3"]
        try await LabCluster.with("upgrade", heartbeat: heartbeat) { cluster in
            let snapshotFile = cluster.fixture.directory.appendingPathComponent("board.snapshot").path
            let (coordinator, oldWorkers) = try await Self.startLedgerBoard(in: cluster, heartbeat: heartbeat, ["--snapshot-file", snapshotFile])
            let traffic = try await BoardTraffic.start(on: cluster, coordinator: coordinator)
            defer { traffic.cancel() }
            let (stream, sampler) = (traffic.stream, traffic.sampler)

            // One worker at a time: SIGTERM (it drains: its ledgers move with their latest state
            // to the others of the pool, their events held and delivered), its exit 0, the next
            // build in its place under the same name, its join, a ledger moved onto it; events flow
            // throughout.
            var newWorkers: [String: DaemonProcess] = [:]
            /// The coordinator's log line at which each worker of the next build joined.
            var nextBuildJoinedAt: [String: Int] = [:]
            var figures: [String] = []
            try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: 0, "before the upgrade")
            // Rebalancing begins when the start's grace is over.
            try await coordinator.stderr.first("the placement grace to end") { $0.contains("placement grace over") }
            for name in names {
                let old = try #require(oldWorkers[name])
                let (next, joinedAt, drainAnswers) = try await Self.replaceWorker(
                    name, old, by: ["TEST_WORKER_BUILD": "next"], in: cluster, coordinator: coordinator)
                newWorkers[name] = next
                nextBuildJoinedAt[name] = joinedAt
                try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: coordinator.stdout.count, "after \(name)'s upgrade")
                // Each drain moved children (a worker hosting none logs no drain).
                let drained = old.stderr.lines.first { $0.contains("children handed over to the parent") }
                #expect(drained != nil, "\(name) handed no child over: its upgrade moved nothing")
                let handedOver = drained.flatMap { $0.components(separatedBy: "drained: ").last?.split(separator: " ").first } ?? "?"
                figures.append("\(name): \(handedOver) children handed over, \(drainAnswers) events accepted while it drained")
            }
            // Every ledger now runs on the next build; events reach each of them there, so its
            // worker acknowledges them with a snapshot of the migrated state.
            let upgradedLine = try await coordinator.stdout.first("every ledger rendered by the next build") { line in
                LedgerBoardFrame.parse(line)?.ledgers.allSatisfy { $0.stateVersion == LedgerWorkflowNext.stateVersion } == true
            }
            let upgradedAt = coordinator.stdout.lines.lastIndex(of: upgradedLine) ?? 0
            try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: upgradedAt, "on the next build")
            try await traffic.finish()

            // Every accepted event applied: the ledgers' counts reach what was accepted.
            let accepted = stream.accepted
            let final = try await coordinator.stdout.first("every accepted event applied") { line in
                guard let frame = LedgerBoardFrame.parse(line) else { return false }
                return zip(frame.ledgers, accepted).allSatisfy { $0.count >= $1.count }
            }
            let finalFrame = try #require(LedgerBoardFrame.parse(final))
            #expect(try await coordinator.terminate() == 0)
            try await Self.terminateAll(names.compactMap { newWorkers[$0] })

            // Exactly once, in order, per event id: the coordinator's snapshot holds each ledger's
            // state as its worker last acknowledged it, and each state is the migrated one.
            let snapshot = try SnapshotFile.load(snapshotFile)
            let refused = stream.refused
            for (index, ids) in accepted.enumerated() {
                let state = try Self.ledgerState(in: snapshot, key: "ledger-\(index)")
                let counts = Dictionary(state.ids.map { ($0, 1) }, uniquingKeysWith: +)
                let twice = counts.filter { $0.value > 1 }.keys.sorted()
                #expect(twice.isEmpty, "ledger-\(index): applied more than once: \(twice)")
                let missing = Set(ids).subtracting(state.ids).sorted()
                #expect(missing.isEmpty, "ledger-\(index): accepted and lost: \(missing)")
                let unaccepted = Set(state.ids).subtracting(ids).sorted()
                #expect(unaccepted.isEmpty, "ledger-\(index): applied but never accepted there: \(unaccepted) (refused: \(refused))")
                #expect(state.ids == ids, "ledger-\(index): applied out of order")
                #expect(state.createdByStateVersion == 1, "ledger-\(index) was not migrated from the running build's state")
            }
            #expect(finalFrame.ledgers.allSatisfy { $0.stateVersion == LedgerWorkflowNext.stateVersion && names.contains($0.renderedBy) })

            let rebalanced = Self.expectNoMoveBack(in: coordinator.stderr.lines, nextBuildJoinedAt: nextBuildJoinedAt)
            #expect(rebalanced > 0, "rebalancing moved no ledger: was it on?")
            let samples = sampler.samples
            Self.expectNeverUnavailable(coordinator, samples)

            // Each drain handed every child over in time; each next build negotiated the highest
            // protocol version both sides speak (it offers one more than the coordinator).
            let coordinatorSpeaks = RemoteProtocol.supported
            let nextSpeaks = coordinatorSpeaks.lowerBound...(coordinatorSpeaks.upperBound + 1)
            let negotiated = try #require(RemoteProtocol.negotiate(offered: Array(nextSpeaks), supported: coordinatorSpeaks))
            #expect(negotiated == coordinatorSpeaks.upperBound)
            for name in names {
                let old = try #require(oldWorkers[name])
                #expect(!old.stderr.lines.contains { $0.contains("drain deadline passed") }, "\(name): \(old.stderr.lines)")
                let next = try #require(newWorkers[name])
                let offered = nextSpeaks.map(String.init).joined(separator: ",")
                #expect(next.stderr.lines.contains { $0.contains("worker started") && $0.contains("protocols=\(offered)") }, "\(next.stderr.lines)")
                #expect(next.stderr.lines.contains { $0.contains("welcomed by the parent") && $0.contains("protocol=\(negotiated)") }, "\(next.stderr.lines)")
                let joins = coordinator.stderr.lines.filter(Self.join(of: name))
                #expect(joins.last?.contains("protocol=\(negotiated)") == true, "\(joins)")
            }
            let total = accepted.map(\.count).reduce(0, +)
            labFigure(
                "rolling upgrade of 3 workers (heartbeat \(heartbeat)), 6 ledgers, rebalancing on (\(rebalanced) moves): \(figures.joined(separator: "; ")); "
                    + "\(total) events accepted, lost 0, applied twice 0, \(refused.count) refused (stale token); "
                    + "\(samples.count) /api/tree samples, unavailable 0; protocol \(negotiated) negotiated; every ledger migrated to state version 2")
        }
    }

    @Test(
        "mid-upgrade, a worker of the running build restarted: rebalancing gives it only ledgers of the running build's state version, never one the next build migrated"
    )
    func oldWorkerRestartedMidUpgrade() async throws {
        let heartbeat = LabCluster.Heartbeat.tolerant
        try await LabCluster.with("upgrade-restart", heartbeat: heartbeat) { cluster in
            let (coordinator, workers) = try await Self.startLedgerBoard(in: cluster, heartbeat: heartbeat)
            let traffic = try await BoardTraffic.start(on: cluster, coordinator: coordinator)
            defer { traffic.cancel() }
            let (stream, sampler) = (traffic.stream, traffic.sampler)
            try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: 0, "before the upgrade")
            try await coordinator.stderr.first("the placement grace to end") { $0.contains("placement grace over") }
            // worker-1 upgraded: it takes its share, which it migrates to state version 2.
            let (next, joinedAt, _) = try await Self.replaceWorker(
                "worker-1", try #require(workers["worker-1"]), by: ["TEST_WORKER_BUILD": "next"], in: cluster, coordinator: coordinator)
            try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: coordinator.stdout.count, "after worker-1's upgrade")
            // worker-2 restarted on the running build: it drains (its ledgers go to worker-1 and
            // worker-3) and rejoins with few or none. Rebalancing fills it from worker-3's ledgers
            // of state version 1; worker-1's migrated ledgers, which it could not read, stay where
            // they are, however much more it holds.
            let (restarted, _, _) = try await Self.replaceWorker(
                "worker-2", try #require(workers["worker-2"]), by: [:], in: cluster, coordinator: coordinator)
            try await coordinator.waitForEventAnswers(Self.eventsPerPhase, from: coordinator.stdout.count, "after worker-2's restart")
            try await traffic.finish()
            let accepted = stream.accepted
            try await coordinator.stdout.first("every accepted event applied") { line in
                guard let frame = LedgerBoardFrame.parse(line) else { return false }
                return zip(frame.ledgers, accepted).allSatisfy { $0.count >= $1.count }
            }
            #expect(try await coordinator.terminate() == 0)
            try await Self.terminateAll([next, restarted, try #require(workers["worker-3"])])

            let rebalanced = Self.expectNoMoveBack(in: coordinator.stderr.lines, nextBuildJoinedAt: ["worker-1": joinedAt])
            let samples = sampler.samples
            Self.expectNeverUnavailable(coordinator, samples)
            #expect(!coordinator.stderr.lines.contains { $0.contains("snapshot cannot be read") }, "a worker was sent a state it cannot read")
            labFigure(
                "an old worker restarted mid-upgrade (heartbeat \(heartbeat)), 6 ledgers, rebalancing on (\(rebalanced) moves): "
                    + "\(accepted.map(\.count).reduce(0, +)) events accepted; \(samples.count) /api/tree samples, unavailable 0; no migrated ledger moved back")
        }
    }

    /// Writes the ledger board's configuration (rebalancing on, the default; a start's grace short
    /// enough for the test to go on after it, once rebalancing runs), starts its coordinator
    /// (events from standard input, and `extra`) and the three workers of the running build, and
    /// waits until every ledger renders.
    static func startLedgerBoard(in cluster: LabCluster, heartbeat: LabCluster.Heartbeat, _ extra: [String] = []) async throws -> (
        coordinator: DaemonProcess, workers: [String: DaemonProcess]
    ) {
        try cluster.writeConfig(
            heartbeat: heartbeat, root: "ledger-board", workers: ledgerWorkers, placement: ledgerPlacement,
            coordinator: ["placement_grace_ms": 5_000],
            sections: ["gateway": ["listen": "127.0.0.1:0"], "drain": ["deadline_ms": 60_000]])
        try await cluster.keygen()
        let coordinator = try await cluster.startCoordinator(["--events-from-stdin"] + extra, standardInput: true)
        var workers: [String: DaemonProcess] = [:]
        for rule in ledgerWorkers {
            let name = try #require(rule["name"])
            workers[name] = try cluster.startWorker(name)
        }
        try await coordinator.stdout.first("every ledger rendered by the running build") { line in
            LedgerBoardFrame.parse(line)?.ledgers.allSatisfy { $0.stateVersion == 1 } == true
        }
        return (coordinator, workers)
    }

    /// Replaces the worker `name`: SIGTERM (it drains: its ledgers move with their latest state
    /// to the others of the pool, their events held and delivered) and its exit 0, a worker
    /// started with `environment` under the same name, its join, and a ledger moved onto it (by
    /// rebalancing, or by the drain when the join came first). Returns the new worker, the coordinator's log line of its join, and the
    /// events accepted while the old one drained.
    static func replaceWorker(
        _ name: String, _ old: DaemonProcess, by environment: [String: String], in cluster: LabCluster, coordinator: DaemonProcess
    ) async throws -> (worker: DaemonProcess, joinedAt: Int, drainAnswers: Int) {
        let (logMark, lineMark) = (coordinator.stderr.count, coordinator.stdout.count)
        #expect(try await old.terminate() == 0, "\(name) (running build) did not exit 0 after its drain")
        let drainAnswers = coordinator.stdout.lines[lineMark...].filter(LedgerEventStream.isAnswer).count
        let worker = try cluster.startWorker(name, environment: environment)
        try await coordinator.stderr.first("\(name) to join again", from: logMark, where: join(of: name))
        let joinedAt = try #require(coordinator.stderr.lines[logMark...].firstIndex(where: join(of: name)))
        // Usually a rebalance; a drained ledger placed after the join goes there by itself.
        try await coordinator.stderr.first("a ledger moved onto \(name)", from: logMark) { MoveLine.parse($0)?.to == name }
        return (worker, joinedAt, drainAnswers)
    }

    /// Expects that no ledger a worker of the next build ran (one that joined at the log line
    /// `nextBuildJoinedAt` gives) was moved again onto a worker of the running build, which
    /// could not read its migrated state: every move in `log`, by a drain or a rebalance, in
    /// order. Returns how many moves were rebalances.
    static func expectNoMoveBack(in log: [String], nextBuildJoinedAt: [String: Int]) -> Int {
        var migrated: Set<String> = []
        var rebalanced = 0
        for (index, line) in log.enumerated() {
            guard let move = MoveLine.parse(line) else { continue }
            if line.contains("(rebalance)") { rebalanced += 1 }
            if let joined = nextBuildJoinedAt[move.to], joined < index {
                migrated.insert(move.path)
            } else {
                #expect(!migrated.contains(move.path), "\(move.path) moved back to \(move.to), a worker of the running build: \(line)")
            }
        }
        return rebalanced
    }

    /// Expects that no child was ever unavailable: not in a status line, not in the
    /// coordinator's log, not in a sample of /api/tree.
    static func expectNeverUnavailable(_ coordinator: DaemonProcess, _ samples: TreeSampler.Samples) {
        let unavailableStatuses = coordinator.stdout.lines.filter(StatusLine.matching("", "unavailable"))
        #expect(unavailableStatuses.isEmpty, "\(unavailableStatuses)")
        let unavailableLogs = coordinator.stderr.lines.filter { $0.contains("status=unavailable") }
        #expect(unavailableLogs.isEmpty, "\(unavailableLogs)")
        #expect(samples.count > 0, "no sample of /api/tree was taken")
        #expect(samples.unavailable.isEmpty, "\(samples.unavailable)")
        #expect(samples.failures.isEmpty, "\(samples.failures)")
    }

    /// The state of the ledger keyed `key` in the coordinator's snapshot: the remote child's own
    /// snapshot (kept in its proxy node's state), which must be of the next build's state version.
    static func ledgerState(in snapshot: TreeSnapshot, key: String) throws -> LedgerWorkflowNext.State {
        /// The mirror of a remote child's node state.
        struct RemoteNodeState: Decodable {
            var snapshot: TreeSnapshot?
            var pendingEvents: [PendingEvent]?
            struct PendingEvent: Decodable {}
        }
        let node = try #require(snapshot.children.first { $0.key == key }?.snapshot, "no \(key) in the snapshot")
        let remote = try JSONDecoder().decode(RemoteNodeState.self, from: try #require(node.state, "\(key): no state"))
        #expect(remote.pendingEvents?.isEmpty ?? true, "\(key): events not acknowledged at the end")
        let child = try #require(remote.snapshot, "\(key): no snapshot of the child")
        #expect(child.workflowType == LedgerWorkflowNext.stableTypeName)
        #expect(child.stateVersion == LedgerWorkflowNext.stateVersion, "\(key): state version \(child.stateVersion)")
        return try JSONDecoder().decode(LedgerWorkflowNext.State.self, from: try #require(child.state, "\(key): no child state"))
    }
}

/// What a lab test sends the ledger board and samples of it throughout: the event stream and the
/// `/api/tree` sampler, each running in a task.
struct BoardTraffic {
    let stream: LedgerEventStream
    let sampler: TreeSampler
    let streaming: Task<Void, any Error>
    let sampling: Task<Void, any Error>

    /// Starts both against `coordinator` (its gateway, on the coordinator's lab host).
    static func start(on cluster: LabCluster, coordinator: DaemonProcess) async throws -> BoardTraffic {
        let gateway = try await GatewayClient.of(coordinator)
        let stream = LedgerEventStream(coordinator: coordinator, ledgers: 6)
        let sampler = TreeSampler(lab: cluster.lab, url: gateway.baseURL + "/api/tree")
        return BoardTraffic(
            stream: stream, sampler: sampler, streaming: Task { try await stream.run() }, sampling: Task { try await sampler.run() })
    }

    /// Stops both (the event in flight answered, the sample under way taken) and waits for them.
    func finish() async throws {
        stream.stop()
        sampler.stop()
        try await withSafetyTimeout("the event stream to stop") { try await streaming.value }
        try await withSafetyTimeout("the /api/tree samples to stop") { try await sampling.value }
    }

    /// Ends both at once (a test that failed).
    func cancel() {
        streaming.cancel()
        sampling.cancel()
    }
}

/// A coordinator log line saying a child moved (`moved from worker-1 (rebalance)`, `moved after
/// worker-1 drained`): the child's path and its new worker.
struct MoveLine {
    var path: String
    var to: String

    static func parse(_ line: String) -> MoveLine? {
        guard line.contains(" moved from ") || line.contains(" moved after ") else { return nil }
        let fields = line.split(separator: " ")
        func value(_ key: String) -> String? { fields.first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) } }
        guard let path = value("path"), let to = value("worker") else { return nil }
        return MoveLine(path: path, to: to)
    }
}

/// A coordinator JSON line showing a rendering of the root `ledger-board`.
struct LedgerBoardFrame: Decodable {
    struct Ledger: Decodable {
        var count: Int
        var record: String?
        var stateVersion: Int
        var renderedBy: String
    }
    struct Rendering: Decodable {
        var ledgers: [Ledger]
    }
    var rendering: Rendering
    var ledgers: [Ledger] { rendering.ledgers }

    /// The frame on `line`, if it is a rendering line of the board.
    static func parse(_ line: String) -> LedgerBoardFrame? {
        guard line.hasPrefix(#"{"event":"rendering""#) else { return nil }
        return try? JSONDecoder().decode(LedgerBoardFrame.self, from: Data(line.utf8))
    }
}

/// A steady stream of events into the board's ledgers through the coordinator's standard input
/// (`--events-from-stdin`), each with a unique id, and what became of each.
///
/// One event at a time, each sent once the answer to the one before arrived; round robin over
/// the ledgers, each with at most `window` events accepted and not yet shown applied (so a
/// ledger that is moving holds a few events, and the others go on).
final class LedgerEventStream: Sendable {
    private struct Record {
        var nextID = 0
        /// Per ledger, the ids answered `sent`, in order.
        var accepted: [[Int]]
        /// Ids answered otherwise, with the answer (`stale-token`, …): never applied.
        var refused: [Int: String] = [:]
    }

    let coordinator: DaemonProcess
    let ledgers: Int
    let window = 2
    private let record: Mutex<Record>
    private let stopped = Atomic<Bool>(false)

    init(coordinator: DaemonProcess, ledgers: Int) {
        self.coordinator = coordinator
        self.ledgers = ledgers
        record = Mutex(Record(accepted: Array(repeating: [], count: ledgers)))
    }

    /// The ids accepted, per ledger, in order.
    var accepted: [[Int]] { record.withLock { $0.accepted } }
    /// The ids refused, with the answer.
    var refused: [Int: String] { record.withLock { $0.refused } }

    /// Ends the stream once the event in flight is answered.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether a line of the coordinator's output answers an event line.
    static let isAnswer: @Sendable (String) -> Bool = { $0.contains(#""event":"event""#) }

    /// The answer line's result.
    private struct Answer: Decodable {
        var result: String
    }

    /// Sends events until `stop()`; reads the coordinator's output for the answers and the
    /// ledgers' counts.
    func run() async throws {
        var shown: [LedgerBoardFrame.Ledger]?
        var inFlight: (id: Int, ledger: Int)?
        var turn = 0
        for await line in coordinator.stdout.lines(from: 0) {
            if let frame = LedgerBoardFrame.parse(line), frame.ledgers.count == ledgers {
                shown = frame.ledgers
            } else if Self.isAnswer(line), let sent = inFlight {
                let result = (try? JSONDecoder().decode(Answer.self, from: Data(line.utf8)).result) ?? line
                record.withLock {
                    if result == "sent" { $0.accepted[sent.ledger].append(sent.id) } else { $0.refused[sent.id] = result }
                }
                inFlight = nil
            }
            guard inFlight == nil else { continue }
            if stopped.load(ordering: .relaxed) { return }
            guard let shown else { continue }
            let accepted = record.withLock { $0.accepted.map(\.count) }
            let open = (0..<ledgers).map { (turn + $0) % ledgers }.first { accepted[$0] - shown[$0].count < window && shown[$0].record != nil }
            guard let ledger = open, let token = shown[ledger].record else { continue }
            turn = ledger + 1
            let id = record.withLock { record in
                record.nextID += 1
                return record.nextID
            }
            try coordinator.send(line: #"{"token":"\#(token)","event":\#(id)}"#)
            inFlight = (id, ledger)
        }
        throw WaitFailure(description: "the coordinator's output ended while events were streaming")
    }
}

/// Samples the coordinator's `/api/tree` back to back (curl on the coordinator's lab host, where
/// the gateway listens on loopback) until stopped; keeps every unavailable node it saw.
final class TreeSampler: Sendable {
    struct Samples: Sendable {
        var count = 0
        /// `path: detail` of each unavailable node seen, with the sample's number.
        var unavailable: [String] = []
        /// Samples that did not answer 200 with a tree.
        var failures: [String] = []
    }

    let lab: NetLab
    let url: String
    private let state = Mutex(Samples())
    private let stopped = Atomic<Bool>(false)

    init(lab: NetLab, url: String) {
        self.lab = lab
        self.url = url
    }

    var samples: Samples { state.withLock { $0 } }

    func stop() { stopped.store(true, ordering: .relaxed) }

    func run() async throws {
        while !stopped.load(ordering: .relaxed) {
            try Task.checkCancellation()
            let (command, arguments) = lab.onHost("coordinator", ["curl", "-sS", "--fail", "--max-time", "30", url])
            let curl = try DaemonProcess(command, arguments, label: "curl /api/tree")
            let status = try await curl.waitForExit()
            let body = curl.stdout.lines.joined(separator: "\n")
            guard status == 0, let tree = try? JSONDecoder().decode(TreeJSON.self, from: Data(body.utf8)) else {
                let reason = "curl exited \(status): \(curl.stderr.lines.joined(separator: " ")) \(body.prefix(200))"
                state.withLock { $0.failures.append(reason) }
                continue
            }
            state.withLock { samples in
                samples.count += 1
                for node in tree.nodes where node.status == "unavailable" {
                    samples.unavailable.append("sample \(samples.count): \(node.path): \(node.detail)")
                }
            }
        }
    }
}

extension DaemonProcess {
    /// Waits until the coordinator's output from line `start` on holds `count` answers to event
    /// lines (`--events-from-stdin`).
    func waitForEventAnswers(_ count: Int, from start: Int, _ what: String) async throws {
        try await withSafetyTimeout("\(count) events answered \(what)") { [stdout] in
            var answers = 0
            for await line in stdout.lines(from: start) where LedgerEventStream.isAnswer(line) {
                answers += 1
                if answers >= count { return }
            }
            throw WaitFailure(description: "the coordinator's output ended after \(answers) of \(count) event answers \(what)")
        }
    }
}
