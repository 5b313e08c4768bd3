#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the process a rendering was made in, so a screen can show which process rendered
/// each pane of a tree that spans processes.
public enum ProcessLabel {
    /// `pid <n>` of the current process, or the value of `WORKFLOW_PROCESS_LABEL` if set.
    public static var current: String {
        if let label = getenv("WORKFLOW_PROCESS_LABEL") { return String(cString: label) }
        return "pid \(getpid())"
    }
}
