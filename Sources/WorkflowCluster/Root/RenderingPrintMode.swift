/// What the coordinator prints on standard output about its root.
///
/// Logs go to standard error; standard output is reserved for what the root renders, so a
/// person (`text`) or a test or tool (`json`) can follow the tree without parsing logs.
public enum RenderingPrintMode: String, Sendable, CaseIterable {
    /// Nothing (a background daemon: `cluster.sh up`).
    case none
    /// Each settled rendering as a small text screen, and status changes as text lines.
    case text
    /// One JSON object per line: `{"event":"rendering",…}`, `{"event":"status",…}`,
    /// `{"event":"listening",…}`, and `{"event":"event",…}` answering `--events-from-stdin`.
    case json
}
