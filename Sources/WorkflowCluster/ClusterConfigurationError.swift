/// Why a configuration was rejected at start.
///
/// Names the file, the key (a dotted path such as `placement[1].worker`) and what was expected,
/// so an operator can fix the file without reading code. Daemons refuse to start on it rather
/// than run with a guess.
public struct ClusterConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or `"command line/environment"` for an override).
    public var file: String
    /// The offending key, dotted; empty for the whole document.
    public var key: String
    /// What the key should hold.
    public var expected: String
    /// What it held instead, when it helps.
    public var found: String?

    /// Creates an error.
    public init(file: String, key: String, expected: String, found: String? = nil) {
        self.file = file
        self.key = key
        self.expected = expected
        self.found = found
    }

    /// The one-line message daemons print before exiting: file, key, expected, found.
    public var description: String {
        let location = key.isEmpty ? file : "\(file): key '\(key)'"
        if let found { return "invalid configuration \(location): expected \(expected), found \(found)" }
        return "invalid configuration \(location): expected \(expected)"
    }
}
