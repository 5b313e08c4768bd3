import Foundation
import WorkflowClusterTesting

/// A real load balancer (Debian's `haproxy`) in front of coordinators' gateways, as
/// docs/OPERATIONS.md recommends for a leader and its standbys: every request goes to the first
/// gateway whose `/health/ready` answers 200 (checked every 100 ms; three failures in a row take
/// one out, a slow answer on a loaded machine is not a failure), so a page keeps one address
/// while the leader changes.
enum LoadBalancer {
    /// The `haproxy` executable, or nil where it is not installed (`scripts/test.sh` installs it).
    static let path: String? = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Starts it as a member of `cluster` on a free loopback port, in front of the gateways on
    /// `gatewayPorts` (in order of preference); returns its base URL once it serves.
    static func start(in cluster: BrowserCluster, gatewayPorts: [Int]) async throws -> String {
        guard let path else { throw WaitFailure(description: "haproxy is not installed") }
        let port = try LoopbackPort.unused()
        let servers = gatewayPorts.enumerated().map { index, gateway in "  server coordinator-\(index) 127.0.0.1:\(gateway) check" }
        let configuration = """
            defaults
              mode http
              timeout connect 1s
              timeout client 60s
              timeout server 60s
              timeout tunnel 1h
            frontend gateways
              bind 127.0.0.1:\(port)
              default_backend coordinators
            backend coordinators
              balance first
              option httpchk GET /health/ready
              http-check expect status 200
              timeout check 2s
              default-server inter 100ms fall 3 rise 1
            \(servers.joined(separator: "\n"))

            """
        let file = cluster.directory.appendingPathComponent("haproxy.cfg")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        // Master-worker mode in the foreground: the master prints "Loading success." once its
        // worker serves, and stops it on SIGTERM.
        let balancer = try cluster.start(path, ["-W", "-db", "-f", file.path], label: "haproxy")
        try await balancer.stderr.first("haproxy to serve") { $0.contains("Loading success") }
        return "http://127.0.0.1:\(port)"
    }
}
