import Logging

/// How a daemon logs: the level and the line format.
///
/// One line per event either way; text for people reading a terminal or `cluster.sh logs`, JSON
/// for log shippers that index the metadata (node path, worker, correlation id).
package struct LogSettings: Sendable, Equatable {
    /// The line formats.
    package enum Format: String, Sendable, Equatable, CaseIterable {
        /// `2026-01-01T00:00:00Z info coordinator: worker joined worker=worker-1`
        case text
        /// `{"time":…,"level":"info","label":"coordinator","message":"worker joined","worker":"worker-1"}`
        case json
    }

    /// The lowest level written.
    package var level: Logger.Level
    /// The line format.
    package var format: Format

    /// Creates settings (info, text unless told otherwise).
    package init(level: Logger.Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }
}
