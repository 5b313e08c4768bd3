import Foundation
import Logging

/// A swift-log handler that writes one line per event to standard error, as text or JSON.
///
/// Daemons run in the background with their stderr in a log file (see `scripts/cluster.sh`), so
/// every event must be one self-contained line: greppable in text form, indexable in JSON form.
/// The runtime's metadata (`path`, `worker`, `correlation`, `peer`) is carried as-is; the handler
/// adds the process's `node` (its cluster name) to every line.
public struct ClusterLogHandler: LogHandler {
    /// The logger's label (the daemon role, e.g. `coordinator`).
    public let label: String
    /// This process's name in the cluster, on every line.
    public let node: String
    /// The line format.
    public let format: LogSettings.Format
    /// The lowest level written (from `log.level` / `--log-level`).
    public var logLevel: Logger.Level
    /// Metadata added to every line of this logger.
    public var metadata: Logger.Metadata = [:]

    /// Creates a handler.
    public init(label: String, node: String, settings: LogSettings) {
        self.label = label
        self.node = node
        self.format = settings.format
        self.logLevel = settings.level
    }

    /// One metadata value of this logger.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one line (text or JSON) to standard error.
    public func log(event: LogEvent) {
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
        let timestamp = time.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        switch format {
        case .text:
            let pairs = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let oneLine = message.replacingOccurrences(of: "\n", with: " ")
            return ([timestamp, level.rawValue, "\(node):", oneLine] + pairs).joined(separator: " ")
        case .json:
            var object: [String: String] = ["time": timestamp, "level": level.rawValue, "label": label, "node": node, "message": message]
            for (key, value) in metadata where object[key] == nil { object[key] = "\(value)" }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }
}

extension Logger {
    /// A logger writing through `ClusterLogHandler`.
    public static func cluster(label: String, node: String, settings: LogSettings) -> Logger {
        Logger(label: label) { label in ClusterLogHandler(label: label, node: node, settings: settings) }
    }
}
