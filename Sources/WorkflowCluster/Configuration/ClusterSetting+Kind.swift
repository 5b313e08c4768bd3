extension ClusterSetting {
    /// What a setting holds.
    package enum Kind: Sendable {
        /// A string (`nonEmpty`: "" is refused).
        case text(nonEmpty: Bool)
        /// A file or directory path; a relative one in the file is resolved beside the file, on
        /// the command line or in the environment against the working directory.
        case path
        /// A file path resolved against the daemon's working directory wherever it is given
        /// (`snapshot.file`, as it always was).
        case workingDirectoryPath
        /// A URL (the words say which).
        case url(String)
        /// A ZeroMQ endpoint (`tcp://host:port`, `ipc://path`).
        case endpoint
        /// A non-empty array of endpoints (file only).
        case endpoints
        /// An HTTP listening address, `host:port`, or `off`.
        case address
        /// Milliseconds, at least the given number.
        case milliseconds(atLeast: Int)
        /// A count, at least the given number.
        case count(atLeast: Int)
        /// One of these words.
        case choice([String])
        /// `true` or `false`.
        case boolean
        /// Pages' origins: an array in the file, comma-separated on the command line.
        case origins
        /// A structure the parser reads itself (`workers`, `placement`): file only.
        case structured(String)

        /// What a value must be, as errors say it after "expected".
        package var expected: String {
            switch self {
            case .text(let nonEmpty): nonEmpty ? "a non-empty string" : "a string"
            case .path, .workingDirectoryPath: "a file path"
            case .url(let what): what
            case .endpoint: ClusterEndpoint.expected
            case .endpoints: "a non-empty array of endpoints (one per coordinator)"
            case .address: "host:port (e.g. 127.0.0.1:8570; port 0 picks a free one) or \"off\""
            case .milliseconds(let least):
                least == 0 ? "a non-negative integer (milliseconds)" : least == 1 ? "a positive integer (milliseconds)" : "an integer of at least \(least) (milliseconds)"
            case .count(let least): least == 1 ? "a positive integer" : "an integer of at least \(least)"
            case .choice(let words): "one of " + words.map { "\"\($0)\"" }.joined(separator: ", ")
            case .boolean: "true or false"
            case .origins: "an array of origins"
            case .structured(let what): what
            }
        }

        /// Whether an empty variable is a value (an empty list of origins: none) rather than
        /// unset, as `VAR=` is for every other setting.
        var takesEmptyText: Bool {
            if case .origins = self { return true }
            return false
        }

        /// What `--help` calls the value by default.
        var valueName: String {
            switch self {
            case .milliseconds: "ms"
            case .count: "count"
            case .path, .workingDirectoryPath: "file"
            case .url: "url"
            case .endpoint, .endpoints: "endpoint"
            case .address: "host:port"
            case .choice: "mode"
            case .origins: "origins"
            case .text, .boolean, .structured: "value"
            }
        }
    }
}
