import Foundation
import Logging

/// A swift-log handler that writes one line per event to standard error, as text or JSON.
///
/// Daemons run in the background with their stderr in a log file (see `scripts/cluster.sh`), so
/// every event must be one self-contained line: greppable in text form, indexable in JSON form.
/// The runtime's metadata (`path`, `worker`, `correlation`, `peer`) is carried as-is; the handler
/// adds the process's `node` (its cluster name) to every line.
///
/// Timestamps are RFC 3339 with the local time zone's offset (`2026-01-01T10:00:00.000+01:00`,
/// `Z` in UTC), so lines from machines in different zones can be ordered. In JSON, a metadata
/// value logged as a number or a boolean (`.stringConvertible(3)`) is written as a JSON number
/// or boolean, so a log index can compare and sum it; everything else is a string.
package struct ClusterLogHandler: LogHandler {
    /// The logger's label (the daemon role, e.g. `coordinator`).
    package let label: String
    /// This process's name in the cluster, on every line.
    package let node: String
    /// The line format.
    package let format: LogSettings.Format
    /// The lowest level written (from `log.level` / `--log-level`).
    package var logLevel: Logger.Level
    /// Metadata added to every line of this logger.
    package var metadata: Logger.Metadata = [:]

    /// Creates a handler.
    package init(label: String, node: String, settings: LogSettings) {
        self.label = label
        self.node = node
        self.format = settings.format
        self.logLevel = settings.level
    }

    /// One metadata value of this logger.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one line (text or JSON) to standard error.
    package func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let line = Self.line(
            time: Date(), level: event.level, label: label, node: node, message: "\(event.message)", metadata: merged,
            format: format)
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Formats one event (exposed for tests of the format).
    static func line(
        time: Date, level: Logger.Level, label: String, node: String, message: String, metadata: Logger.Metadata,
        format: LogSettings.Format
    ) -> String {
        let timestamp = time.formatted(timestampStyle)
        switch format {
        case .text:
            let pairs = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let oneLine = message.replacingOccurrences(of: "\n", with: " ")
            return ([timestamp, level.rawValue, "\(node):", oneLine] + pairs).joined(separator: " ")
        case .json:
            var object: [String: Any] = ["time": timestamp, "level": level.rawValue, "label": label, "node": node, "message": message]
            for (key, value) in metadata where object[key] == nil { object[key] = jsonValue(value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// RFC 3339 with milliseconds and the local offset. Read once: a daemon's zone does not move.
    private static let timestampStyle = Date.ISO8601FormatStyle(
        dateSeparator: .dash, dateTimeSeparator: .standard, timeSeparator: .colon, timeZoneSeparator: .colon,
        includingFractionalSeconds: true, timeZone: .current)

    /// A metadata value as JSON: numbers and booleans typed, arrays and dictionaries nested,
    /// anything else its description.
    private static func jsonValue(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible):
            switch convertible {
            case let flag as Bool: return flag
            case let number as any BinaryInteger: return NSNumber(value: Int64(clamping: number))
            case let number as Double where number.isFinite: return number
            case let number as Float where number.isFinite: return Double(number)
            default: return convertible.description
            }
        case .array(let values): return values.map(jsonValue)
        case .dictionary(let values): return values.mapValues(jsonValue)
        }
    }
}

extension Logger {
    /// A logger writing through `ClusterLogHandler`.
    package static func cluster(label: String, node: String, settings: LogSettings) -> Logger {
        Logger(label: label) { label in ClusterLogHandler(label: label, node: node, settings: settings) }
    }
}
