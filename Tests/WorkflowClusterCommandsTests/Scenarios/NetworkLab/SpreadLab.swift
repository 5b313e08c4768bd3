import ClusterTestSupport
import Foundation
import Testing
import WorkflowClusterTesting

/// Two coordinators with spread sessions on two hosts of a `NetLab` (`coordinator-a` and
/// `coordinator-b`, `durability-test-daemon` with the root `event-ledger`), each with its worker
/// `w1` on a host of its own (`worker-a`, `worker-b`), and the private PostgreSQL server they
/// share on `db`, reached over TCP across the lab's bridge.
///
/// Each coordinator's gateway listens on its host's loopback and is published by `netlab.sh
/// publish`; its advertised URL is the published one, which is how the test's clients (outside
/// the lab's network) reach it, so a redirect leads them to the owner. Every daemon, the server
/// and the lab are removed when the body ends, also when it throws.
struct SpreadLab: SpreadPair {
    let lab: NetLab
    let fixture: ClusterFixture
    /// Each coordinator's published gateway port on this host's loopback.
    let ports: [Int]

    static let coordinatorHosts = ["coordinator-a", "coordinator-b"]
    static let workerHosts = ["worker-a", "worker-b"]
    static let hosts = coordinatorHosts + workerHosts + ["db"]
    /// The port each coordinator binds on its host's address.
    static let port = 5570
    /// The port each coordinator's gateway listens on, on its host's loopback.
    static let gatewayPort = 48080
    static let heartbeat = LabCluster.Heartbeat.tolerant

    /// Coordinator `index`'s endpoint.
    func endpoint(_ index: Int) -> String { "tcp://\(lab.address(Self.coordinatorHosts[index])):\(Self.port)" }

    func startCoordinator(_ index: Int) throws -> DaemonProcess {
        let host = Self.coordinatorHosts[index]
        let daemon = DaemonProcess.executableURL("durability-test-daemon").path
        let arguments = [
            daemon, "--config", fixture.configPath, "--print-renderings", "json", "--endpoint", endpoint(index),
            "--sessions-advertised-url", advertisedURL(index),
        ]
        let (command, onHost) = lab.onHost(host, arguments)
        return try fixture.start(command, onHost, label: "coordinator-\(index) on \(host)")
    }

    func gateway(_ index: Int, of coordinator: DaemonProcess) async throws -> GatewayClient {
        _ = try await GatewayClient.of(coordinator)
        return GatewayClient(baseURL: advertisedURL(index))
    }

    func rawPort(_ index: Int) -> Int { ports[index] }

    /// Runs `body` with a lab, the server on `db`, both gateways published and both workers
    /// started (the coordinators are the body's to start); skipped, saying why, where no server
    /// can be had.
    static func with(_ name: String, _ body: (SpreadLab) async throws -> Void) async throws {
        if let reason = PrivatePostgres.unavailableReason { try Test.cancel("spread sessions lab test skipped: \(reason)") }
        try await NetLab.with(hosts: hosts) { lab in
            let (launcher, launcherArguments) = lab.onHost("db", [])
            try await PrivatePostgres.with(listeningOn: lab.address("db"), launcher: [launcher] + launcherArguments) { database in
                try await ClusterFixture.with("lab-\(name)") { fixture in
                    var ports: [Int] = []
                    for host in coordinatorHosts {
                        let (command, arguments) = lab.publish(host, target: "127.0.0.1:\(gatewayPort)")
                        let publisher = try fixture.start(command, arguments, label: "\(host)'s gateway, published")
                        let line = try await publisher.stdout.first("\(host)'s gateway to be published") { $0.hasPrefix("listening ") }
                        ports.append(try #require(Int(line.dropFirst("listening ".count))))
                    }
                    let spreadLab = SpreadLab(lab: lab, fixture: fixture, ports: ports)
                    let url = try #require(database.tcpURL)
                    try DurableAcceptanceProcessTests.writeConfig(
                        fixture, store: ["kind": "postgres", "url": url], port: gatewayPort,
                        sessions: ["enabled": true, "idle_timeout_ms": 600_000, "spread_lease_ms": SpreadSessionProcessTests.leaseMilliseconds],
                        heartbeat: ["interval_ms": heartbeat.intervalMilliseconds, "liveness": heartbeat.liveness],
                        security: ["mode": "plaintext", "allow_plaintext_on_network": true])
                    let worker = DaemonProcess.executableURL("durability-test-daemon").path
                    for index in 0..<2 {
                        let (command, arguments) = lab.onHost(
                            workerHosts[index], [worker, "--config", fixture.configPath, "--name", "w1", "--endpoint", spreadLab.endpoint(index)])
                        _ = try fixture.start(
                            command, arguments, label: "w1 on \(workerHosts[index])", environment: ["DURABILITY_TEST_ROLE": "worker"])
                    }
                    try await body(spreadLab)
                }
            }
        }
    }
}
