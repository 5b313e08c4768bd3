import Foundation

/// A web page's origin (`scheme://host[:port]`) whose cross-origin requests the gateway answers
/// (`gateway.allowed_origins`).
///
/// A page served by one coordinator follows its session to the coordinator that owns it
/// (spread sessions); when that one has another address, the browser sends the page's requests
/// there only if the gateway names the page's origin in CORS headers. Origins are compared as a
/// browser sends them in `Origin`: scheme and host in lower case, no default port, no path.
public struct GatewayOrigin: Sendable, Hashable, CustomStringConvertible {
    /// `scheme://host[:port]`, as a browser's `Origin` header spells it.
    public let description: String

    /// Parses `text` (`http://HOST[:PORT]` or `https://…`, nothing after the port but an
    /// optional `/`); `nil` when it is not an origin.
    public init?(parsing text: String) {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.password == nil, url.query == nil,
            url.fragment == nil, url.path.isEmpty || url.path == "/", text.lowercased().hasPrefix(scheme + "://"),
            !host.contains(where: { $0.isWhitespace })
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        description = scheme + "://" + hostPart + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    /// Parses the setting `key`'s `text`; a value that is not an origin is a configuration error
    /// naming `source` (the daemon exits 78).
    package static func parsing(_ text: String, key: String, source: String) throws(ClusterConfigurationError) -> GatewayOrigin {
        guard let origin = GatewayOrigin(parsing: text) else {
            throw ClusterConfigurationError(
                file: source, key: key, expected: "a page's origin, http(s)://HOST[:PORT] (no path, no \"*\")", found: "\"\(text)\"")
        }
        return origin
    }
}
