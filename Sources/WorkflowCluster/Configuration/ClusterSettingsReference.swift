import Foundation

/// The settings' table in docs/OPERATIONS.md, written from the declarations
/// (`ClusterSetting.all`), so the docs say what the daemons do.
///
/// `workflow-coordinator settings` prints it; `scripts/settings-table.sh` puts it between the
/// markers in OPERATIONS, and a test fails when the table there differs from this one.
package enum ClusterSettingsReference {
    /// The line before the table in OPERATIONS.
    package static let beginMarker = "<!-- settings table: written by scripts/settings-table.sh from ClusterSetting.all; edit the declarations, not this table -->"
    /// The line after it.
    package static let endMarker = "<!-- end of settings table -->"

    /// Every setting as a Markdown table: key, flag, environment variable, default, meaning
    /// (with what it needs of other settings).
    package static func markdownTable() -> String {
        var lines = ["| key | flag | environment | read by | default | meaning |", "|---|---|---|---|---|---|"]
        for setting in ClusterSetting.all {
            let key = setting.inFile ? "`\(setting.key)`" : "(`\(setting.key)`: no file key)"
            let flag = setting.flag.map { "`\($0)`" } ?? ""
            let environment = setting.environment.map { "`\($0)`" } ?? ""
            let defaultValue = setting.defaultValue.isEmpty ? "" : setting.defaultValue
            let rules = setting.rules.map(\.summary)
            let meaning = setting.help + (rules.isEmpty ? "" : " " + rules.joined(separator: "; ").capitalizedFirst + ".")
            let cells = [key, flag, environment, setting.reader.rawValue, defaultValue, meaning].map { $0.replacingOccurrences(of: "|", with: "\\|") }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// `document` with the text between the markers replaced by the current table; `nil` when
    /// the document has no markers.
    package static func updating(_ document: String) -> String? {
        guard let begin = document.range(of: beginMarker), let end = document.range(of: endMarker, range: begin.upperBound..<document.endIndex)
        else { return nil }
        return String(document[..<begin.upperBound]) + "\n" + markdownTable() + "\n" + String(document[end.lowerBound...])
    }
}

extension String {
    /// The string with its first character upper-cased.
    fileprivate var capitalizedFirst: String {
        prefix(1).uppercased() + dropFirst()
    }
}
