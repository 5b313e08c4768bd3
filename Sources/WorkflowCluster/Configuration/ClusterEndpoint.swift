/// Checks the cluster endpoint's syntax before any socket sees it.
///
/// libzmq reports a malformed endpoint only as `EINVAL` when the socket binds or connects, long
/// after the configuration was read and with no hint of which setting was wrong. The same check
/// runs for the file and for `--endpoint` / `WORKFLOW_COORDINATOR_ENDPOINT`, so a bad value is a
/// configuration error (exit 78) naming its source, wherever it came from.
enum ClusterEndpoint {
    /// What a valid endpoint looks like, for error messages.
    static let expected = "a ZeroMQ endpoint: tcp://HOST:PORT (PORT 1-65535, or * for any) or ipc://PATH"

    /// Returns `text` if it is a `tcp://host:port`, `ipc://path` or `inproc://name` endpoint;
    /// otherwise throws an error naming `key` and `source` (a file, or the command line/environment).
    static func validated(_ text: String, key: String, source: String) throws(ClusterConfigurationError) -> String {
        guard isValid(text) else {
            throw ClusterConfigurationError(file: source, key: key, expected: expected, found: "\"\(text)\"")
        }
        return text
    }

    static func isValid(_ text: String) -> Bool {
        if let path = text.dropPrefix("ipc://") ?? text.dropPrefix("inproc://") {
            return !path.isEmpty && !path.contains { $0.isNewline || $0 == "\0" }
        }
        guard let address = text.dropPrefix("tcp://") else { return false }
        let host: Substring
        let port: Substring
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]"), address[address.index(after: close)...].hasPrefix(":") else { return false }
            host = address[address.index(after: address.startIndex)..<close]
            port = address[address.index(close, offsetBy: 2)...]
        } else {
            guard let colon = address.lastIndex(of: ":") else { return false }
            host = address[..<colon]
            port = address[address.index(after: colon)...]
            guard !host.contains(":") else { return false }
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else { return false }
        if port == "*" { return true }
        guard port.allSatisfy(\.isASCII), let number = Int(port) else { return false }
        return (0...65535).contains(number)
    }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> Substring? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }
}
