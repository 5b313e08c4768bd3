import Foundation

/// A PostgreSQL server of one test's own: Debian's `initdb` and `postgres` on a data directory
/// and a unix socket in a fresh temporary directory (no TCP port unless asked for: on loopback,
/// or on a network lab host's address), stopped and removed when the test's body ends, also when
/// it throws.
///
/// PostgreSQL refuses to run as root, and tests run as root in CI: then the server runs as the
/// `postgres` user Debian's package creates (`setpriv`, which execs, so the process this test
/// support starts *is* the server and stopping it needs no forwarding). The server is a child
/// this process owns and reads the log of: readiness is its "ready to accept connections" line,
/// not a poll, and its end is its exit, not the end of a pipe some grandchild still holds.
public struct PrivatePostgres: Sendable {
    /// The temporary directory: the data directory (`data`) and the server's socket.
    public let directory: URL
    /// The number in the socket's name (`.s.PGSQL.PORT`), and the TCP port at `tcpAddress` when
    /// there is one.
    public let port: Int

    /// The address the server also listens on over TCP, at `port` (`nil`: none): 127.0.0.1
    /// (`with(listeningOnLoopback:)`) or a network lab host's (`with(listeningOn:launcher:)`).
    public let tcpAddress: String?

    /// Whether the server also listens on TCP at 127.0.0.1:`port` (`with(listeningOnLoopback:)`).
    public var listensOnLoopback: Bool { tcpAddress == "127.0.0.1" }

    /// The URL a client connects with: the `postgres` superuser, database `postgres`, over the
    /// unix socket.
    public var url: String { "postgres://postgres@/postgres?host=\(directory.path)&port=\(port)" }

    /// The URL over TCP on loopback, when the server listens there (a test may put a proxy of
    /// its own in between: a cut-off database it controls).
    public var loopbackURL: String? { listensOnLoopback ? tcpURL : nil }

    /// The URL over TCP at `tcpAddress`, when the server listens on one.
    public var tcpURL: String? { tcpAddress.map { "postgres://postgres@\($0):\(port)/postgres" } }

    /// Where Debian's server programs are (`/usr/lib/postgresql/VERSION/bin`), newest first.
    public static var binaries: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") && FileManager.default.isExecutableFile(atPath: "\($0)/postgres") }
    }

    /// Why no private server can be started here (`nil`: one can), for a test that skips.
    /// `POSTGRES_TESTS=off` in the environment says so on purpose.
    public static var unavailableReason: String? {
        if ProcessInfo.processInfo.environment["POSTGRES_TESTS"] == "off" { return "POSTGRES_TESTS=off" }
        guard binaries != nil else {
            return "no PostgreSQL server programs in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql; scripts/test.sh installs it)"
        }
        if geteuid() == 0 {
            guard getpwnam("postgres") != nil else { return "running as root and there is no `postgres` user to run the server as" }
            guard FileManager.default.isExecutableFile(atPath: setpriv) else { return "running as root and \(setpriv) is missing" }
        }
        return nil
    }

    /// Why a private server could not be started or stopped.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the program's output.
        public var description: String
    }

    private static let setpriv = "/usr/bin/setpriv"

    /// The certificate a server serving TLS presents, and its private key: PEM files the test
    /// made (e.g. with the `openssl` command), copied into the server's directory.
    public struct ServerCertificate: Sendable {
        /// The certificate (PEM), with any intermediate certificates after it.
        public var certificate: URL
        /// Its private key (PEM, unencrypted).
        public var key: URL

        /// A certificate and its key.
        public init(certificate: URL, key: URL) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// Runs `body` with a fresh, empty server; the server is stopped (immediate shutdown) and its
    /// directory removed when `body` returns or throws. `listeningOnLoopback`: on TCP at
    /// 127.0.0.1 too, on a port no one else listens on (then `port` is that port). `tls`: the
    /// server offers TLS on TCP (`ssl=on`) with this certificate (clients may still connect in
    /// clear: a test of a client that insists on TLS uses a server without it).
    public static func with<T>(
        port: Int = 5432, listeningOnLoopback: Bool = false, tls: ServerCertificate? = nil, _ body: (PrivatePostgres) async throws -> T
    ) async throws -> T {
        if let unavailableReason { throw Failure(description: unavailableReason) }
        let port = listeningOnLoopback ? try LoopbackPort.unused() : port
        return try await with(port: port, tcpAddress: listeningOnLoopback ? "127.0.0.1" : nil, launcher: [], tls: tls, body)
    }

    /// Runs `body` with a fresh, empty server listening on TCP at `address`:`port` too, started
    /// through `launcher` (a command prefix that execs the rest, keeping the pid: e.g.
    /// `netlab.sh exec LAB HOST`, so that the server runs in a network lab host's namespace, where
    /// `address` is, and the lab's cuts separate it from its clients). Clients on the subnets of
    /// the server's own addresses are trusted, like those on loopback. Stopped and removed as
    /// with `with(port:listeningOnLoopback:_:)`.
    public static func with<T>(
        listeningOn address: String, port: Int = 5432, launcher: [String], _ body: (PrivatePostgres) async throws -> T
    ) async throws -> T {
        if let unavailableReason { throw Failure(description: unavailableReason) }
        return try await with(port: port, tcpAddress: address, launcher: launcher, body)
    }

    private static func with<T>(
        port: Int, tcpAddress: String?, launcher: [String], tls: ServerCertificate? = nil, _ body: (PrivatePostgres) async throws -> T
    ) async throws -> T {
        guard let binaries else { throw Failure(description: "no PostgreSQL server programs") }
        // Short and fixed: a unix socket's path has at most 107 bytes.
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("wf-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        if geteuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.path)
        }
        let data = directory.appendingPathComponent("data").path
        let initdb = try start("initdb", "\(binaries)/initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions"])
        guard try await initdb.waitForExit() == 0 else {
            throw Failure(description: "initdb failed: \((initdb.stdout.lines + initdb.stderr.lines).joined(separator: "\n"))")
        }
        if let tcpAddress, tcpAddress != "127.0.0.1" {
            let rules = try FileHandle(forWritingTo: URL(fileURLWithPath: data).appendingPathComponent("pg_hba.conf"))
            defer { try? rules.close() }
            try rules.seekToEnd()
            try rules.write(contentsOf: Data("host all all samenet trust\n".utf8))
        }
        let settings = try tls.map { try serveTLS($0, data: data) } ?? []
        let server = try start(
            "postgres", "\(binaries)/postgres",
            [
                "-D", data, "-k", directory.path, "-p", "\(port)", "-h", tcpAddress ?? "",
                // Small: several tests may each run one at once on a small machine.
                "-c", "max_connections=20", "-c", "shared_buffers=16MB",
            ] + settings, launcher: launcher)
        do {
            try await server.stderr.first("PostgreSQL to accept connections") { $0.contains("ready to accept connections") }
        } catch {
            await stop(server)
            throw Failure(description: "postgres did not start: \(error)\n\(server.stderr.lines.suffix(20).joined(separator: "\n"))")
        }
        let result: T
        do {
            result = try await body(PrivatePostgres(directory: directory, port: port, tcpAddress: tcpAddress))
        } catch {
            await stop(server)
            throw error
        }
        await stop(server)
        return result
    }

    /// Copies `certificate` into the data directory as the server wants it (the key readable by
    /// its user only: PostgreSQL refuses a key others can read) and returns the server's
    /// settings that serve TLS with it.
    private static func serveTLS(_ certificate: ServerCertificate, data: String) throws -> [String] {
        let files = FileManager.default
        let (certificateFile, keyFile) = ("\(data)/server.crt", "\(data)/server.key")
        try files.copyItem(atPath: certificate.certificate.path, toPath: certificateFile)
        try files.copyItem(atPath: certificate.key.path, toPath: keyFile)
        try files.setAttributes([.posixPermissions: 0o644], ofItemAtPath: certificateFile)
        try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        if geteuid() == 0 {
            for file in [certificateFile, keyFile] { try files.setAttributes([.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: file) }
        }
        return ["-c", "ssl=on", "-c", "ssl_cert_file=\(certificateFile)", "-c", "ssl_key_file=\(keyFile)"]
    }

    /// Starts `program` as the server's user: through `setpriv` when this process is root,
    /// directly otherwise; through `launcher` first, if any. Messages in English, as the
    /// readiness check reads them.
    private static func start(_ label: String, _ program: String, _ arguments: [String], launcher: [String] = []) throws -> DaemonProcess {
        let environment = ["LC_ALL": "C"]
        let command =
            geteuid() == 0 ? [setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups", "--", program] + arguments : [program] + arguments
        let full = launcher + command
        return try DaemonProcess(full[0], Array(full.dropFirst()), label: label, environment: environment)
    }

    /// Immediate shutdown (SIGQUIT: the server ends its backends and exits without a checkpoint,
    /// which a thrown-away cluster does not need), then waits for every process of it to end.
    private static func stop(_ server: DaemonProcess) async {
        if server.isRunning { kill(server.pid, SIGQUIT) }
        if (try? await server.waitForExit()) == nil { server.forceKill() }
    }
}
