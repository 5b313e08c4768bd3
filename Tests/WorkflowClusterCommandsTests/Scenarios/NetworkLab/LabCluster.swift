import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WorkflowClusterTesting

/// A cluster whose daemons run on the hosts of a `NetLab`, over tcp with CURVE as shipped: keys
/// from `workflow-coordinator keygen --config`, the coordinator bound to its host's lab address.
///
/// Daemons are started through a `ClusterFixture` (so every one is stopped, also when a test
/// fails) and run on their host with `netlab.sh exec`. Workers: worker-1 and worker-3 in pool
/// `inbox` (the list pane's rule), worker-2 alone hosting the detail pane (a named rule):
/// losing the list pane's worker moves the list pane; losing worker-2 makes the detail pane unavailable
/// until worker-2 is back.
final class LabCluster: Sendable {
    let lab: NetLab
    let fixture: ClusterFixture
    /// The address the coordinator binds and the workers connect to.
    let coordinatorAddress: String
    static let port = 5570

    static let hosts = ["coordinator", "standby", "worker-1", "worker-2", "worker-3"]
    static let workers: [ClusterFixture.Rule] = [
        ["name": "worker-1", "pool": "lists"], ["name": "worker-2", "pool": "details"], ["name": "worker-3", "pool": "lists"],
    ]
    static let placement: [ClusterFixture.Rule] = [
        ["match": "RemoteTestSupport.ListPaneWorkflow", "pool": "lists"],
        ["match": "RemoteTestSupport.DetailPaneWorkflow", "worker": "worker-2"],
    ]

    /// The heartbeat a test runs with: a peer silent for `interval × liveness` is dead.
    struct Heartbeat: Sendable, CustomStringConvertible {
        var intervalMilliseconds: Int
        var liveness: Int
        /// How long silence takes to be declared death.
        var window: Duration { .milliseconds(intervalMilliseconds * liveness) }
        var description: String { "\(intervalMilliseconds) ms × \(liveness)" }

        /// Quick detection: 0.5 s of silence.
        static let quick = Heartbeat(intervalMilliseconds: 100, liveness: 5)
        /// Tolerant: 2 s of silence, so that TCP's retransmission back-off (200 ms, 400 ms, …)
        /// after a short outage or lost segments is not taken for death.
        static let tolerant = Heartbeat(intervalMilliseconds: 250, liveness: 8)
        /// For a lossy link: 8 s of silence. With frames lost at random, TCP resends a segment
        /// after 200 ms, then 400, 800, 1600, 3200 ms, and a lost ACK counts like a lost segment:
        /// windows of 2 s and 4 s were each seen to take the coordinator for dead under 5% loss
        /// (docs/OPERATIONS.md, Network lab).
        static let lossy = Heartbeat(intervalMilliseconds: 1000, liveness: 8)
    }

    private init(lab: NetLab, fixture: ClusterFixture, coordinatorAddress: String) {
        self.lab = lab
        self.fixture = fixture
        self.coordinatorAddress = coordinatorAddress
    }

    /// The endpoint the coordinator binds and the workers use.
    var endpoint: String { "tcp://\(coordinatorAddress):\(Self.port)" }

    /// Writes the configuration: CURVE with keys in `keys/` beside the file (`security` `nil`:
    /// no `security` section, which on tcp means CURVE), the given heartbeat; by default the
    /// root `list-detail` on the workers and placement above. `coordinator` and `sections` add
    /// keys to the coordinator section and sections to the file.
    func writeConfig(
        heartbeat: Heartbeat, security: [String: Any]? = ["mode": "curve", "keys_dir": "keys"], root: String = "list-detail",
        workers: [ClusterFixture.Rule] = LabCluster.workers, placement: [ClusterFixture.Rule] = LabCluster.placement, coordinator: [String: Any] = [:],
        sections: [String: Any] = [:]
    ) throws {
        var document: [String: Any] = [
            "coordinator": coordinator.merging(["endpoint": endpoint, "root": root]) { _, new in new },
            "workers": workers,
            "heartbeat": ["interval_ms": heartbeat.intervalMilliseconds, "liveness": heartbeat.liveness],
            "request": ["deadline_ms": 10_000],
            "log": ["level": "info", "format": "text"],
            "placement": placement,
        ]
        document.merge(sections) { _, new in new }
        if let security { document["security"] = security }
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: fixture.configPath))
    }

    /// `workflow-coordinator keygen --config`: the coordinator's and every listed worker's keys.
    func keygen() async throws {
        let keygen = try fixture.start(
            DaemonProcess.executableURL("test-coordinator").path, ["keygen", "--config", fixture.configPath], label: "keygen")
        let status = try await keygen.waitForExit()
        guard status == 0 else { throw WaitFailure(description: "keygen exited \(status): \(keygen.stderr.lines)") }
    }

    /// Starts a daemon (`workflow-coordinator` or `workflow-worker`) on `host`, with
    /// `environment` added to the test's; with `standardInput`, it reads what
    /// `DaemonProcess.send(line:)` writes.
    func start(
        _ executable: String, on host: String, _ arguments: [String], label: String, environment: [String: String] = [:],
        standardInput: Bool = false
    ) throws -> DaemonProcess {
        let (command, commandArguments) = lab.onHost(host, [DaemonProcess.executableURL(executable).path] + arguments)
        return try fixture.start(command, commandArguments, label: label, environment: environment, standardInput: standardInput)
    }

    /// Starts the coordinator on `host`, printing JSON lines, and waits until it listens.
    @discardableResult
    func startCoordinator(
        on host: String = "coordinator", _ extra: [String] = [], label: String = "coordinator", standardInput: Bool = false
    ) async throws -> DaemonProcess {
        let coordinator = try start(
            "test-coordinator", on: host, ["--config", fixture.configPath, "--print-renderings", "json"] + extra, label: label,
            standardInput: standardInput)
        do {
            try await coordinator.stdout.first("the coordinator to listen on \(endpoint)") { $0.contains(#""event":"listening""#) }
        } catch {
            throw WaitFailure(description: "\(error); its log:\n\(coordinator.stderr.lines.joined(separator: "\n"))")
        }
        return coordinator
    }

    /// Starts worker `name` on its own host (without waiting for it to join), with `environment`
    /// added to the test's.
    @discardableResult
    func startWorker(_ name: String, _ extra: [String] = [], environment: [String: String] = [:]) throws -> DaemonProcess {
        try start("test-worker", on: name, ["--config", fixture.configPath, "--name", name] + extra, label: name, environment: environment)
    }

    /// Runs `body` with a lab and a cluster in it, then stops every daemon and removes the lab,
    /// whether `body` passed or threw (attaching the daemons' logs to a failure).
    static func with(
        _ name: String, coordinatorHost: String = "coordinator", serviceAddress: String? = nil, heartbeat: Heartbeat,
        _ body: (LabCluster) async throws -> Void
    ) async throws {
        try await NetLab.with(hosts: hosts) { lab in
            let fixture = try ClusterFixture("lab-\(name)")
            let address: String
            if let serviceAddress {
                try await lab.move(serviceAddress, to: coordinatorHost)
                address = serviceAddress
            } else {
                address = lab.address(coordinatorHost)
            }
            let cluster = LabCluster(lab: lab, fixture: fixture, coordinatorAddress: address)
            do {
                try cluster.writeConfig(heartbeat: heartbeat)
                try await body(cluster)
            } catch {
                fixture.recordLogs()
                await fixture.shutDown()
                throw error
            }
            await fixture.shutDown()
        }
    }
}

/// The selections the coordinator's scripted demo makes (`--picks`) and the ones its
/// frames show, to check that every event took effect once and in order.
///
/// The script cycles 1, 2, 3, 4, 5, 1, …: each selection differs from the two before it, and the
/// demo makes the next one only once a frame shows the last. The frames' selections, with
/// consecutive repeats folded, must therefore be exactly a prefix of the script: a lost event
/// stalls the demo (the prefix stops growing); an event applied a second time after a later one
/// (a replay gone wrong, or a stale copy of a child still answering) puts an old selection back,
/// which breaks the prefix; so does a selection lost from the root's state (a reset).
enum SelectionScript {
    /// The script's first `count` selections.
    static func selections(_ count: Int) -> [Int] { (0..<count).map { $0 % 5 + 1 } }

    /// `--picks` for the first `count` selections.
    static func argument(_ count: Int) -> String { selections(count).map(String.init).joined(separator: ",") }

    /// The selections the rendering lines among `lines` show, consecutive repeats folded.
    static func shown(in lines: some Sequence<String>) -> [Int] {
        var shown: [Int] = []
        for line in lines {
            guard let id = selection(in: line) else { continue }
            if shown.last != id { shown.append(id) }
        }
        return shown
    }

    /// The selection a rendering line shows, if any.
    static func selection(in line: String) -> Int? {
        guard line.hasPrefix(#"{"event":"rendering""#) else { return nil }
        return ListDetailFrame.parse(line)?.detail.id
    }

    /// How many of `shown`'s leading selections match the script (all of them when intact).
    static func intactPrefix(of shown: [Int]) -> Int {
        zip(shown, selections(shown.count)).prefix { $0 == $1 }.count
    }
}

extension DaemonProcess {
    /// Waits until the coordinator's frames from line `start` on have shown `count` selection
    /// changes (a new selection each); returns the line count at that point.
    @discardableResult
    func waitForSelections(_ count: Int, from start: Int, _ what: String) async throws -> Int {
        try await withSafetyTimeout("\(count) selections \(what)") { [stdout] in
            var changes = 0
            var last: Int?
            var index = start
            for await line in stdout.lines(from: start) {
                index += 1
                guard let id = SelectionScript.selection(in: line), id != last else { continue }
                if last != nil { changes += 1 }
                last = id
                if changes >= count { return index }
            }
            throw WaitFailure(description: "the coordinator's output ended after \(changes) of \(count) selections \(what)")
        }
    }
}

/// Prints one figure of the network lab (collected into docs/OPERATIONS.md).
func labFigure(_ text: String) {
    print("netlab figure: \(text)")
}

/// `duration` in milliseconds.
func milliseconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) * 1000 + Double(attoseconds) / 1e15
}

/// `duration` in seconds with two decimals, for figures.
func seconds(_ duration: Duration) -> String {
    String(format: "%.2f s", milliseconds(duration) / 1000)
}
