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
