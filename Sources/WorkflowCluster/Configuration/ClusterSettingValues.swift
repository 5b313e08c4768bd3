/// The settings given to a daemon, each with where it was given: the file's, with the command
/// line's and the environment's on top (command line > environment > file).
///
/// Knowing where each value came from is what lets every error name the file or the flag the
/// operator must change, and every check between settings (`ClusterSetting.Rule`) name both.
package struct ClusterSettingValues: Sendable {
    /// The command line and the environment, as errors name them.
    package static let commandLineOrEnvironment = "command line/environment"

    /// One given value.
    package struct Given: Sendable, Equatable {
        /// The value, read and checked.
        package var value: ClusterSetting.Value
        /// The file, or `commandLineOrEnvironment`.
        package var source: String
        /// The flag or variable it came through (`nil` from the file).
        package var via: String?

        /// Where it came from, in words ("from cluster.json", "from --store-path").
        var origin: String { "from " + (via ?? source) }
    }

    /// The given values, by key.
    package private(set) var given: [String: Given] = [:]

    /// No values.
    package init() {}

    /// The value given for `setting`, if any.
    package subscript(setting: ClusterSetting) -> Given? {
        get { given[setting.key] }
        set { given[setting.key] = newValue }
    }

    /// The command line's and the environment's values: each setting's flag in `overrides`,
    /// else its variable in `environment` (an empty variable counts as unset, as shells write
    /// `VAR=` to clear one, except where empty is a value: no origins).
    package static func reading(_ overrides: ClusterOverrides, environment: [String: String]) throws(ClusterConfigurationError) -> ClusterSettingValues {
        var values = ClusterSettingValues()
        for setting in ClusterSetting.all {
            let text: String
            let via: String
            if let flagged = overrides[setting] {
                text = flagged
                via = setting.flag ?? setting.key
            } else if let name = setting.environment, let variable = environment[name], !variable.isEmpty || setting.kind.takesEmptyText {
                text = variable
                via = name
            } else {
                continue
            }
            let value = try setting.read(text: text, source: commandLineOrEnvironment, via: via)
            values[setting] = Given(value: value, source: commandLineOrEnvironment, via: via)
        }
        return values
    }

    /// These values with `other`'s on top.
    package func overlaid(with other: ClusterSettingValues) -> ClusterSettingValues {
        var merged = self
        merged.given.merge(other.given) { _, top in top }
        return merged
    }

    /// Checks every rule between the given settings (`coordinatorOnly`: the coordinator's own
    /// rules, which a worker reading the same file ignores; else the others), in the
    /// declarations' order: the first violation is the error.
    package func checkRules(coordinatorOnly: Bool) throws(ClusterConfigurationError) {
        for setting in ClusterSetting.all {
            guard let given = self[setting] else { continue }
            for rule in setting.rules where rule.coordinatorOnly == coordinatorOnly {
                if let when = rule.when, !when.contains(given.value.raw) { continue }
                try check(rule, of: setting, given: given)
            }
        }
    }

    /// Checks `rule` of `setting`, given as `given`.
    func check(_ rule: ClusterSetting.Rule, of setting: ClusterSetting, given: Given) throws(ClusterConfigurationError) {
        let other = ClusterSetting.named(rule.other)
        let spellings = other.map { " (\($0.spellings))" } ?? ""
        let otherGiven = self.given[rule.other]
        switch rule.need {
        case .oneOf(let values):
            let current = otherGiven?.value.raw ?? other?.defaultValue ?? ""
            guard !values.contains(current) else { return }
            let wanted = values.map { "\"\($0)\"" }.joined(separator: " or ")
            throw ClusterConfigurationError(
                file: given.source, key: setting.key, expected: "\(rule.other) \(wanted) with it\(spellings): \(rule.because)",
                found: "\(rule.other) \"\(current)\" (\(otherGiven?.origin ?? "the default"))", via: given.via)
        case .given:
            guard otherGiven?.value.isOff ?? true else { return }
            throw ClusterConfigurationError(
                file: given.source, key: rule.other,
                expected: "\(other?.kind.expected ?? "a value")\(spellings): \(setting.key) \(given.value.words) (\(given.origin)) needs it: \(rule.because)",
                found: otherGiven.map { "\($0.value.words) (\($0.origin))" } ?? "none")
        case .absent:
            guard let otherGiven, !otherGiven.value.isOff else { return }
            throw ClusterConfigurationError(
                file: given.source, key: setting.key, expected: "no \(rule.other) with it: \(rule.because)",
                found: "\(rule.other) set too (\(otherGiven.origin))", via: given.via)
        }
    }
}
