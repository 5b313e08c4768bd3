import Foundation
import Logging
import PostgresNIO

/// How a coordinator reaches its PostgreSQL store: the plan a `store.url` makes (its TLS, its
/// timeouts, the name errors give it), and the words for what went wrong on the way.
extension PostgresCoordinatorStore {
    /// How to connect to the database a URL names.
    struct ConnectionPlan {
        /// The URL without its password, as errors name the store.
        var name: String
        var configuration: PostgresConnection.Configuration
        /// The URL's `connect_timeout`, else the caller's.
        var connectTimeout: Duration
        /// The URL's `operation_timeout`, else the caller's.
        var operationTimeout: Duration
        /// The server's address, in words.
        var target: String
        /// How the connection is secured (`sslmode`, `sslrootcert`).
        var security: PostgresTransportSecurity
    }

    /// The connection settings `url` names.
    static func plan(url: String, connectTimeout: Duration, operationTimeout: Duration) throws(CoordinatorStoreError) -> ConnectionPlan {
        let expected = "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or postgres://USER@/DATABASE?host=SOCKET_DIR&port=PORT"
        let name = Self.withoutPassword(url)
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw .cannotOpen(store: name, reason: "not a PostgreSQL URL (\(expected))")
        }
        guard let user = components.user, !user.isEmpty else { throw .cannotOpen(store: name, reason: "no user name (\(expected))") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty, !database.contains("/") else { throw .cannotOpen(store: name, reason: "no database name (\(expected))") }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard Self.parameterNames.contains(item.name) else {
                throw .cannotOpen(
                    store: name, reason: "unknown parameter '\(item.name)' (known: \(Self.parameterNames.joined(separator: ", ")))")
            }
            parameters[item.name] = item.value ?? ""
        }
        let security: PostgresTransportSecurity
        switch PostgresTransportSecurity.parse(parameters, overUnixSocket: !(parameters["host"] ?? "").isEmpty) {
        case .success(let parsed): security = parsed
        case .failure(let refusal): throw .cannotOpen(store: name, reason: refusal.reason)
        }
        var timeouts = ["connect_timeout": connectTimeout, "operation_timeout": operationTimeout]
        for key in timeouts.keys.sorted() {
            guard let text = parameters[key] else { continue }
            guard let seconds = Int(text), seconds > 0, seconds <= 3600 else {
                throw .cannotOpen(store: name, reason: "\(key) must be a number of seconds from 1 to 3600 (got '\(text)')")
            }
            timeouts[key] = .seconds(seconds)
        }
        let timeout = timeouts["connect_timeout"] ?? connectTimeout
        var port = components.port ?? 5432
        if let text = parameters["port"] {
            guard let value = Int(text), (1...65_535).contains(value) else {
                throw .cannotOpen(store: name, reason: "port must be a number from 1 to 65535 (got '\(text)')")
            }
            port = value
        }
        var configuration: PostgresConnection.Configuration
        let target: String
        if let socketDirectory = parameters["host"], !socketDirectory.isEmpty {
            guard socketDirectory.hasPrefix("/") else {
                throw .cannotOpen(store: name, reason: "host= must be the server's socket directory, an absolute path (got '\(socketDirectory)')")
            }
            target = "the server's socket \(socketDirectory)/.s.PGSQL.\(port)"
            configuration = .init(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: user, password: components.password, database: database)
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw .cannotOpen(store: name, reason: "no host (\(expected))")
            }
            target = "the server at \(host):\(port)"
            let tls: PostgresConnection.Configuration.TLS
            switch security.connectionTLS() {
            case .success(let configured): tls = configured
            case .failure(let refusal): throw .cannotOpen(store: name, reason: refusal.reason)
            }
            configuration = .init(host: host, port: port, username: user, password: components.password, database: database, tls: tls)
        }
        let (seconds, attoseconds) = timeout.components
        configuration.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        // Prepared statements planned for their values each time (`PostgresCheckpointCommit`).
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_custom_plan")]
        return ConnectionPlan(
            name: name, configuration: configuration, connectTimeout: timeout,
            operationTimeout: timeouts["operation_timeout"] ?? operationTimeout, target: target, security: security)
    }

    /// The URL's query parameters this store knows (libpq's names).
    static let parameterNames = ["host", "port", "connect_timeout", "operation_timeout", "sslmode", "sslrootcert"]

    /// `url` with its password replaced by `***` (errors and logs must not show it).
    static func withoutPassword(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    /// The server's message, or what went wrong with the connection in words (not the Swift
    /// type's dump); `target` is the server's address in words.
    /// `security`: the connection's TLS, which a refused handshake is explained by.
    static func words(_ error: any Error, target: String = "the server", timeout: Duration? = nil, security: PostgresTransportSecurity? = nil) -> String {
        switch error {
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] { return message }
            if error.code == .sslUnsupported {
                return "\(target) offers no TLS, which sslmode=\(security?.mode.rawValue ?? "require") requires (the server's ssl setting is off)"
            }
            if let underlying = error.underlying { return words(underlying, target: target, timeout: timeout, security: security) }
            return "\(error.code)"
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "the certificate of \(target) does not name that host (sslmode=verify-full checks the host name, verify-ca does not)"
        case NIOSSLError.handshakeFailed(let failure):
            let refused = "\(failure)".contains("CERTIFICATE_VERIFY_FAILED")
            let authorities = security?.rootCertificateFile.map { "a CA of sslrootcert \($0)" } ?? "a CA the system trusts"
            return refused
                ? "the certificate of \(target) is not signed by \(authorities) (sslmode=\(security?.mode.rawValue ?? "verify-full")): \(failure)"
                : "the TLS handshake with \(target) failed: \(failure)"
        case ChannelError.connectTimeout:
            return "\(target) did not answer within \(timeout.map { "\($0)" } ?? "the connect timeout")"
        case let error as IOError:
            return "cannot connect to \(target): \(String(cString: strerror(error.errnoCode)))"
        case let error as NIOConnectionError:
            if let failure = error.connectionErrors.first { return words(failure.error, target: target, timeout: timeout) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "cannot resolve the host name \(error.host)" }
            return "cannot connect to \(target)"
        default:
            return "\(error)"
        }
    }
}
