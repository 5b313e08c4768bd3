/// Why a configuration was rejected at start.
///
/// Names the file, the key (a dotted path such as `placement[1].worker`) and what was expected,
/// so an operator can fix the file without reading code. Daemons refuse to start on it rather
/// than run with a guess.
package struct ClusterConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or `"command line/environment"` for an override).
    package var file: String
    /// The offending key, dotted; empty for the whole document.
    package var key: String
    /// What the key should hold.
    package var expected: String
    /// What it held instead, when it helps.
    package var found: String?
    /// The flag or environment variable the value came through (`--store-path`,
    /// `WORKFLOW_STORE_PATH`), when `file` is the command line or the environment: an operator
    /// looks for what they typed, not for the file's key.
    package var via: String?
    /// The whole message, for an error that is about the file rather than a key in it (a file
    /// that does not exist: `no such file: PATH`); `nil` for the usual file-key-expected message.
    package var message: String?

    /// Creates an error.
    package init(file: String, key: String, expected: String, found: String? = nil, via: String? = nil) {
        self.file = file
        self.key = key
        self.expected = expected
        self.found = found
        self.via = via
    }

    /// The configuration file `file` does not exist. Said in those words (`no such file: PATH`),
    /// the way an operator who mistyped a path expects to read it, not as an errno.
    package init(noSuchFile file: String) {
        self.init(file: file, key: "", expected: "an existing file", found: "no such file")
        message = "invalid configuration: no such file: \(file)"
    }

    /// The one-line message daemons print before exiting: file, key, expected, found.
    package var description: String {
        if let message { return message }
        let location = key.isEmpty ? file : "\(file): key '\(key)'" + (via.map { " (\($0))" } ?? "")
        if let found { return "invalid configuration \(location): expected \(expected), found \(found)" }
        return "invalid configuration \(location): expected \(expected)"
    }
}
