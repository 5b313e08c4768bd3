import ClusterTestSupport
import Foundation
import Testing
import WorkflowClusterTesting

/// A leader and a standby coordinator on two hosts of a `NetLab` (`coordinator` and `standby`,
/// `durability-test-daemon` with the root `event-ledger`), their worker `w1` on `worker-1`, and
/// the private PostgreSQL server they share running on `db`, reached over TCP across the lab's
/// bridge: cutting a host's traffic cuts it from the database as from the workers.
///
/// Each coordinator's gateway listens on its host's loopback; the test's clients reach it
/// through `netlab.sh publish`, from outside the lab's network, which the cuts leave alone (as
/// clients on another network than the cluster's). Every daemon, the server and the lab are
/// removed when the test's body ends, also when it throws.
final class StandbyLab: StandbyPair {
    typealias Standby = StandbyCoordinatorProcessTests

    let lab: NetLab
    let fixture: ClusterFixture
    /// Each coordinator's gateway as this process reaches it, by coordinator index.
    let gateways: [GatewayClient]
    /// The server on `db` the coordinators share.
    let database: PrivatePostgres

    /// The hosts of coordinator 0 and 1.
    static let coordinatorHosts = ["coordinator", "standby"]
    static let hosts = coordinatorHosts + ["db", "worker-1"]
    /// The port each coordinator binds on its host's address once it leads.
    static let port = 5570
    /// The port each coordinator's gateway listens on, on its host's loopback.
    static let gatewayPort = 48080
    static let heartbeat = LabCluster.Heartbeat.tolerant

    private init(lab: NetLab, fixture: ClusterFixture, gateways: [GatewayClient], database: PrivatePostgres) {
        self.lab = lab
        self.fixture = fixture
        self.gateways = gateways
        self.database = database
    }

    /// Both coordinators' endpoints, in the order of `coordinatorHosts`.
    var endpoints: [String] { Self.coordinatorHosts.map { "tcp://\(lab.address($0)):\(Self.port)" } }

    func startCoordinator(_ index: Int, _ extra: [String]) throws -> DaemonProcess {
        let host = Self.coordinatorHosts[index]
        let daemon = DaemonProcess.executableURL("durability-test-daemon").path
        let (command, arguments) = lab.onHost(host, [daemon] + Standby.coordinatorArguments(fixture, endpoints, index, extra))
        return try fixture.start(command, arguments, label: "coordinator-\(index) on \(host)")
    }

    func gateway(_ index: Int, of coordinator: DaemonProcess, role: String) async throws -> GatewayClient {
        _ = try await GatewayClient.of(coordinator, role: role)
        return gateways[index]
    }

    /// Runs `body` with a lab, the server on `db`, both gateways published and the worker
    /// started (the coordinators are the body's to start); skipped, saying why, where no
    /// server can be had. `sessions`: the configuration's `sessions` section (none: off).
    static func with(_ name: String, sessions: [String: Any]? = nil, _ body: (StandbyLab) async throws -> Void) async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("standby lab test skipped: \(reason)") }
        try await NetLab.with(hosts: hosts) { lab in
            let (launcher, launcherArguments) = lab.onHost("db", [])
            try await PrivatePostgres.with(listeningOn: lab.address("db"), launcher: [launcher] + launcherArguments) { database in
                try await ClusterFixture.with("lab-\(name)") { fixture in
                    var gateways: [GatewayClient] = []
                    for host in coordinatorHosts {
                        let (command, arguments) = lab.publish(host, target: "127.0.0.1:\(gatewayPort)")
                        let publisher = try fixture.start(command, arguments, label: "\(host)'s gateway, published")
                        let line = try await publisher.stdout.first("\(host)'s gateway to be published") { $0.hasPrefix("listening ") }
                        gateways.append(GatewayClient(baseURL: "http://127.0.0.1:\(line.dropFirst("listening ".count))"))
                    }
                    let standbyLab = StandbyLab(lab: lab, fixture: fixture, gateways: gateways, database: database)
                    let url = try #require(database.tcpURL)
                    try DurableAcceptanceProcessTests.writeConfig(
                        fixture, store: ["kind": "postgres", "url": url, "lease_ms": Standby.leaseMilliseconds], port: gatewayPort,
                        endpoints: standbyLab.endpoints, sessions: sessions,
                        heartbeat: ["interval_ms": heartbeat.intervalMilliseconds, "liveness": heartbeat.liveness],
                        security: ["mode": "plaintext", "allow_plaintext_on_network": true])
                    let worker = DaemonProcess.executableURL("durability-test-daemon").path
                    let (command, arguments) = lab.onHost("worker-1", [worker, "--config", fixture.configPath, "--name", "w1"])
                    _ = try fixture.start(command, arguments, label: "w1 on worker-1", environment: ["DURABILITY_TEST_ROLE": "worker"])
                    try await body(standbyLab)
                }
            }
        }
    }
}

extension StandbyLab: UpgradablePair {
    /// Coordinator `index` started on its host as the next release (`NextReleaseSchema`).
    func startNextRelease(_ index: Int) throws -> DaemonProcess {
        let host = Self.coordinatorHosts[index]
        let daemon = DaemonProcess.executableURL("durability-test-daemon").path
        let (command, arguments) = lab.onHost(
            host, ["/usr/bin/env", "DURABILITY_TEST_STORE_SCHEMA=next", daemon] + Standby.coordinatorArguments(fixture, endpoints, index))
        return try fixture.start(command, arguments, label: "coordinator-\(index) on \(host), next release")
    }
}
