extension ClusterSetting {
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
