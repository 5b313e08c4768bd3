import Foundation

/// One setting of the cluster's daemons, declared once: its key in the configuration file, its
/// flag, its environment variable, what it holds (type and allowed range), its default, which
/// other settings it needs or excludes, and the words `--help` and docs/OPERATIONS.md say of it.
///
/// Everything else is derived from the declarations (`ClusterSetting.all`): the file's known
/// keys and the typed reading of each value (`ClusterConfigurationParser`), the command line and
/// environment layered on top (`ClusterSettings.load`), the checks between settings
/// (`ClusterSettingValues.checkRules`), the daemons' `--help` (`argumentHelp`) and the table in
/// OPERATIONS (`ClusterSettingsReference`). Adding a setting is adding a declaration.
package struct ClusterSetting: Sendable, Hashable, CustomStringConvertible {
    /// Which daemon reads a setting: whose command takes its flag, and who checks its rules.
    package enum Reader: String, Sendable {
        /// The coordinator only (its store, gateway, sessions, snapshots).
        case coordinator
        /// Workers only (a worker's name, pool, drain).
        case worker
        /// Both daemons (the endpoint, logging, security, heartbeats).
        case both
    }

    /// The key, dotted (`gateway.header_timeout_ms`), as in the file and in every error.
    package let key: String
    /// Whether the file may hold it (`false`: a per-process setting, given by flag or environment).
    package let inFile: Bool
    /// The command-line flag (`--store-path`), if any.
    package let flag: String?
    /// The environment variable (`WORKFLOW_STORE_PATH`), if any.
    package let environment: String?
    /// What the setting holds, and the range allowed.
    package let kind: Kind
    /// The default, as the docs say it (`5000`, `none`, `off`).
    package let defaultValue: String
    /// Which daemon reads it.
    package let reader: Reader
    /// The settings it needs or excludes, checked after every layer is applied.
    package let rules: [Rule]
    /// What the flag's value is called in `--help` (`ms`, `file`).
    package let valueName: String
    /// What the setting does, in one sentence: `--help` and the docs' table say it.
    package let help: String
    /// Whether its value is a secret (a database URL may carry a password): never printed.
    package let isSecret: Bool
    /// Writes a value into the settings.
    let apply: @Sendable (inout ClusterSettings, Value) -> Void

    init(
        _ key: String, inFile: Bool = true, flag: String? = nil, environment: String? = nil, kind: Kind, default defaultValue: String,
        reader: Reader, rules: [Rule] = [], valueName: String? = nil, isSecret: Bool = false, help: String,
        apply: @escaping @Sendable (inout ClusterSettings, Value) -> Void
    ) {
        self.key = key
        self.inFile = inFile
        self.flag = flag
        self.environment = environment
        self.kind = kind
        self.defaultValue = defaultValue
        self.reader = reader
        self.rules = rules
        self.valueName = valueName ?? kind.valueName
        self.help = help
        self.isSecret = isSecret
        self.apply = apply
    }

    /// The file's section (`gateway` of `gateway.listen`; the key itself for a top-level one).
    package var section: String {
        key.split(separator: ".", maxSplits: 1).first.map(String.init) ?? key
    }

    /// The key within its section (`listen` of `gateway.listen`), or `nil` for a top-level key.
    package var name: String? {
        let parts = key.split(separator: ".", maxSplits: 1)
        return parts.count == 2 ? String(parts[1]) : nil
    }

    /// The flag without its dashes, as ArgumentParser names an option (`store-path`).
    package var longFlagName: String {
        String((flag ?? "").drop { $0 == "-" })
    }

    /// Where the setting can be given, for errors and the docs: the key, the flag, the variable.
    package var spellings: String {
        ([inFile ? key : nil, flag, environment].compactMap { $0 }).joined(separator: ", ")
    }

    package var description: String { key }

    package static func == (lhs: ClusterSetting, rhs: ClusterSetting) -> Bool { lhs.key == rhs.key }

    package func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

extension ClusterSetting {
    /// What a setting holds.
    package enum Kind: Sendable {
        /// A string (`nonEmpty`: "" is refused).
        case text(nonEmpty: Bool)
        /// A file or directory path; a relative one in the file is resolved beside the file, on
        /// the command line or in the environment against the working directory.
        case path
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
            case .path: "a file path"
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
            case .path: "file"
            case .url: "url"
            case .endpoint, .endpoints: "endpoint"
            case .address: "host:port"
            case .choice: "mode"
            case .origins: "origins"
            case .text, .boolean, .structured: "value"
            }
        }
    }

    /// A setting's value, once read and checked.
    package enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int)
        case boolean(Bool)
        case list([String])
        case address(GatewayAddress?)
        case origins([GatewayOrigin])

        /// The value as the rules compare it and errors quote it.
        package var words: String {
            switch self {
            case .text(let text): "\"\(text)\""
            case .integer(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .list(let items): items.joined(separator: ", ")
            case .address(let address): address.map { "\"\($0)\"" } ?? "\"off\""
            case .origins(let origins): origins.map(\.description).joined(separator: ", ")
            }
        }

        /// Whether the value turns its feature off (`gateway.listen` `off`, `store.kind` `none`).
        var isOff: Bool {
            switch self {
            case .address(nil), .text("none"), .boolean(false): true
            default: false
            }
        }

        /// The value as rules compare it with words (`sqlite`, `true`, `off`).
        package var raw: String {
            switch self {
            case .text(let text): text
            case .integer(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .list(let items): items.joined(separator: ",")
            case .address(let address): address?.description ?? "off"
            case .origins(let origins): origins.map(\.description).joined(separator: ",")
            }
        }

        var list: [String] {
            if case .list(let items) = self { return items }
            return []
        }

        var address: GatewayAddress? {
            if case .address(let address) = self { return address }
            return nil
        }

        var text: String {
            if case .text(let text) = self { return text }
            return ""
        }

        var integer: Int {
            if case .integer(let value) = self { return value }
            return 0
        }

        var milliseconds: Duration { .milliseconds(integer) }

        var boolean: Bool {
            if case .boolean(let value) = self { return value }
            return false
        }
    }

    /// How one setting depends on another: checked from the declarations once every layer is
    /// applied, each violation a configuration error naming both keys.
    package struct Rule: Sendable {
        /// What the other setting must be.
        package enum Need: Sendable {
            /// The other setting's value (given, or its default) is one of these.
            case oneOf([String])
            /// The other setting is given, and not `off`/`none`.
            case given
            /// The other setting is not given.
            case absent
        }

        /// When the rule applies: `nil`, whenever this setting is given; else when its value is
        /// one of these.
        package let when: [String]?
        /// The other setting.
        package let other: String
        /// What it must be.
        package let need: Need
        /// Why, in the operator's words.
        package let because: String
        /// Checked by the coordinator only (a worker reading the same file ignores it).
        package let coordinatorOnly: Bool

        /// `other` must hold one of `values` when this setting is given (or holds one of `when`).
        static func needs(_ other: String, _ values: [String], when: [String]? = nil, because: String, coordinatorOnly: Bool = false) -> Rule {
            Rule(when: when, other: other, need: .oneOf(values), because: because, coordinatorOnly: coordinatorOnly)
        }

        /// `other` must be given too.
        static func needsGiven(_ other: String, when: [String]? = nil, because: String, coordinatorOnly: Bool = false) -> Rule {
            Rule(when: when, other: other, need: .given, because: because, coordinatorOnly: coordinatorOnly)
        }

        /// `other` must not be given too.
        static func excludes(_ other: String, because: String, coordinatorOnly: Bool = false) -> Rule {
            Rule(when: nil, other: other, need: .absent, because: because, coordinatorOnly: coordinatorOnly)
        }

        /// The rule as the docs' table says it.
        package var summary: String {
            let condition = when.map { " (when " + $0.map { "`\($0)`" }.joined(separator: " or ") + ")" } ?? ""
            switch need {
            case .oneOf(let values): return "needs `\(other)` " + values.map { "`\($0)`" }.joined(separator: " or ") + condition
            case .given: return "needs `\(other)`" + condition
            case .absent: return "excludes `\(other)`" + condition
            }
        }
    }
}

extension ClusterSetting {
    /// Reads the setting from the file: `value` as JSON decoded it; a relative path is resolved
    /// against `directory` (the file's).
    func read(json value: Any, file: String, directory: URL) throws(ClusterConfigurationError) -> Value {
        func fail(_ found: String? = nil) -> ClusterConfigurationError {
            ClusterConfigurationError(file: file, key: key, expected: kind.expected, found: found ?? JSONWords.describe(value))
        }
        switch kind {
        case .boolean:
            guard !(value is String), let flag = value as? Bool else { throw fail() }
            return .boolean(flag)
        case .milliseconds(let least), .count(let least):
            guard !(value is String), let number = value as? NSNumber, let integer = Int(exactly: number.doubleValue)
            else { throw fail() }
            guard integer >= least else { throw fail("\(integer)") }
            return .integer(integer)
        case .endpoints:
            guard let list = value as? [Any], !list.isEmpty else { throw fail() }
            var endpoints: [String] = []
            for (index, item) in list.enumerated() {
                guard let text = item as? String else {
                    throw ClusterConfigurationError(file: file, key: "\(key)[\(index)]", expected: "a string", found: JSONWords.describe(item))
                }
                endpoints.append(try ClusterEndpoint.validated(text, key: "\(key)[\(index)]", source: file))
            }
            return .list(endpoints)
        case .origins:
            guard let list = value as? [Any] else { throw fail() }
            var origins: [GatewayOrigin] = []
            for (index, item) in list.enumerated() {
                guard let text = item as? String else {
                    throw ClusterConfigurationError(file: file, key: "\(key)[\(index)]", expected: "a string", found: JSONWords.describe(item))
                }
                origins.append(try GatewayOrigin.parsing(text, key: "\(key)[\(index)]", source: file))
            }
            return .origins(origins)
        case .structured:
            throw fail()
        case .text, .path, .url, .endpoint, .address, .choice:
            guard let text = value as? String else {
                throw ClusterConfigurationError(file: file, key: key, expected: "a string: \(kind.expected)", found: JSONWords.describe(value))
            }
            let read = try self.read(text: text, source: file, via: nil)
            if case .path = kind, !text.hasPrefix("/") { return .text(directory.appendingPathComponent(text).path) }
            return read
        }
    }

    /// Reads the setting from the command line or the environment (`via` names the flag or the
    /// variable, for errors): the same checks as the file's.
    func read(text: String, source: String, via: String?) throws(ClusterConfigurationError) -> Value {
        func fail() -> ClusterConfigurationError {
            ClusterConfigurationError(file: source, key: key, expected: kind.expected, found: "\"\(text)\"", via: via)
        }
        switch kind {
        case .text(let nonEmpty):
            guard !nonEmpty || !text.isEmpty else { throw fail() }
            return .text(text)
        case .path, .url:
            guard !text.isEmpty else { throw fail() }
            return .text(text)
        case .endpoint:
            do {
                return .text(try ClusterEndpoint.validated(text, key: key, source: source))
            } catch {
                throw fail()
            }
        case .address:
            do {
                return .address(try GatewayAddress.parsing(text, key: key, source: source))
            } catch {
                throw fail()
            }
        case .milliseconds(let least), .count(let least):
            guard let integer = Int(text), integer >= least else { throw fail() }
            return .integer(integer)
        case .choice(let words):
            // `INFO` is `info`: a word's case is not worth a refusal.
            guard words.contains(text.lowercased()) else { throw fail() }
            return .text(text.lowercased())
        case .boolean:
            guard let flag = Bool(text) else { throw fail() }
            return .boolean(flag)
        case .origins:
            var origins: [GatewayOrigin] = []
            for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                do {
                    origins.append(try GatewayOrigin.parsing(item, key: key, source: source))
                } catch {
                    throw ClusterConfigurationError(file: error.file, key: error.key, expected: error.expected, found: error.found, via: via)
                }
            }
            return .origins(origins)
        case .endpoints, .structured:
            throw fail()
        }
    }

    /// The `--help` of the setting's flag: what it does, then what it overrides.
    package var argumentHelp: String {
        let overridden = [inFile ? key : nil, environment].compactMap { $0 }
        let suffix = overridden.isEmpty ? "" : " Overrides \(overridden.joined(separator: " and "))."
        let defaulted = defaultValue.isEmpty ? "" : " Default: \(defaultValue)."
        return help + defaulted + suffix
    }
}

/// How a JSON value is named in errors ("a string ("fast")", "null").
enum JSONWords {
    /// `value` in words.
    static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is String: "a string (\"\(value)\")"
        case let number as NSNumber: "a number or boolean (\(number))"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: "\(type(of: value))"
        }
    }
}
