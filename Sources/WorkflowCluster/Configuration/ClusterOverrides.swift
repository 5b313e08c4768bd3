/// Settings given on a daemon's command line, the highest-precedence layer: each setting's
/// flag as the operator typed it, by setting (`ClusterSetting`).
///
/// Only what the operator typed is set; everything else falls through to the environment, then
/// to the configuration file.
package struct ClusterOverrides: Sendable, Equatable {
    /// The typed values, by setting key.
    private var values: [String: String]

    /// Overrides of the settings given (a `nil` value: not typed).
    package init(_ values: [ClusterSetting: String?] = [:]) {
        self.values = [:]
        for (setting, value) in values {
            if let value { self.values[setting.key] = value }
        }
    }

    /// The text typed for `setting`'s flag, if any.
    package subscript(setting: ClusterSetting) -> String? {
        get { values[setting.key] }
        set { values[setting.key] = newValue }
    }
}
