import Foundation

/// The coordinator's HTTP gateway, as the configuration file's `gateway` section says.
///
/// The gateway serves the root's renderings to clients that are not workflows (a browser, a
/// tool), takes their events, and answers probes and metrics scrapes. It is off unless an
/// address is configured, and a non-loopback address needs a bearer token: an open HTTP port
/// that can send events into the tree is never exposed by omission.
package struct GatewaySettings: Sendable, Equatable {
    /// Where the gateway listens; `nil`: no gateway.
    package var listen: GatewayAddress?
    /// A file holding the bearer token every API request must carry (`Authorization: Bearer`);
    /// required when `listen` is not a loopback address. Resolved beside the configuration file.
    package var bearerTokenFile: String?
    /// The bounds on each client connection (`header_timeout_ms`, `body_timeout_ms`,
    /// `idle_timeout_ms`, `max_connections`).
    package var limits: GatewayLimits
    /// The pages' origins allowed to call the API across origins (`allowed_origins`): a page
    /// served by one coordinator following its session to another's address. Empty: none.
    package var allowedOrigins: [GatewayOrigin]
    /// How the rendering stream paces each client (`stream_window`, `stream_tick_ms`).
    package var stream: GatewayStreamPacing

    /// Creates settings; by default there is no gateway.
    package init(
        listen: GatewayAddress? = nil, bearerTokenFile: String? = nil, limits: GatewayLimits = GatewayLimits(),
        allowedOrigins: [GatewayOrigin] = [], stream: GatewayStreamPacing = GatewayStreamPacing()
    ) {
        self.stream = stream
        self.listen = listen
        self.bearerTokenFile = bearerTokenFile
        self.limits = limits
        self.allowedOrigins = allowedOrigins
    }

    /// Checks the combination (`file` names the source in the error): a non-loopback address
    /// without a token file is refused.
    package func validate(file: String) throws(ClusterConfigurationError) {
        guard let listen, !listen.isLoopback, bearerTokenFile == nil else { return }
        throw ClusterConfigurationError(
            file: file, key: ClusterSetting.gatewayBearerTokenFile.key,
            expected: "a bearer token file when gateway.listen is not a loopback address (\(listen))", found: "none")
    }

    /// Reads the bearer token file, if one is configured: its first line, trimmed. Refuses a
    /// missing or empty file and one readable by group or others, like a secret key.
    package func loadBearerToken() throws(ClusterConfigurationError) -> String? {
        guard let path = bearerTokenFile else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ClusterConfigurationError(
                file: path, key: ClusterSetting.gatewayBearerTokenFile.key, expected: "a readable token file (mode 0600)",
                found: String(cString: strerror(errno)))
        }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw ClusterConfigurationError(
                file: path, key: ClusterSetting.gatewayBearerTokenFile.key, expected: "a token file readable by its owner only (chmod 600 it)",
                found: "mode 0" + String(permissions, radix: 8))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ClusterConfigurationError(file: path, key: ClusterSetting.gatewayBearerTokenFile.key, expected: "a readable token file", found: "unreadable")
        }
        let token = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16 else {
            // The text is a secret: report its length only.
            throw ClusterConfigurationError(
                file: path, key: ClusterSetting.gatewayBearerTokenFile.key, expected: "a token of at least 16 characters on its first line",
                found: "\(token.count) characters")
        }
        return token
    }
}

/// A gateway's listening address: `host:port`, an IPv4 address, `localhost` or `[IPv6]`, and a
/// port (0: any free port, which the coordinator logs).
public struct GatewayAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host to bind (without brackets for IPv6).
    public var host: String
    /// The port (0: chosen by the system).
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; `nil` when it is not one.
    public init?(parsing text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, !hostPart.contains(where: { $0.isWhitespace || $0 == "/" }),
            let port = Int(portPart), (0...65535).contains(port), portPart.allSatisfy(\.isASCII)
        else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    /// Parses `text` as `host:port` (or `off`: `nil`) for the setting `key`; a bad value is a
    /// configuration error naming `source` (a file, or the command line/environment).
    package static func parsing(_ text: String, key: String, source: String) throws(ClusterConfigurationError) -> GatewayAddress? {
        if text == "off" { return nil }
        guard let address = GatewayAddress(parsing: text) else {
            throw ClusterConfigurationError(
                file: source, key: key, expected: "host:port (e.g. 127.0.0.1:8570; port 0 picks a free one) or \"off\"", found: "\"\(text)\"")
        }
        return address
    }

    /// Whether only this machine can connect (127.0.0.0/8, `localhost`, `::1`).
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
