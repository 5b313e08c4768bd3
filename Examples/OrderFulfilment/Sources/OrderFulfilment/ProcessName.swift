import Foundation

/// Names the process a pane was rendered in, so the dashboard shows where each part of the tree
/// runs: the cluster daemons set `WORKFLOW_PROCESS_LABEL` (`coordinator`, the worker's name).
public enum ProcessName {
    /// The daemon's label, or `pid N` outside a cluster.
    public static var current: String {
        ProcessInfo.processInfo.environment["WORKFLOW_PROCESS_LABEL"] ?? "pid \(ProcessInfo.processInfo.processIdentifier)"
    }

    /// What a placeholder pane shows while its worker has not rendered it.
    public static let unavailable = "(unavailable)"
}
