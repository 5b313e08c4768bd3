/// How many sessions a directory holds active and how many passivated, kept as each session's
/// slot changes rather than counted over all of them: the directory's gauges are set after every
/// creation, and recounting 100,000 sessions each time made creation slow down as they
/// accumulated. A value without I/O.
struct SessionCounts: Equatable {
    /// Sessions whose tree runs (`active`).
    private(set) var active = 0
    /// The others (passivated, or being passivated or reactivated).
    private(set) var passivated = 0

    /// One session's slot changed from `old` to `new` (`nil`: absent), each given as whether it
    /// is active.
    mutating func changed(from old: Bool?, to new: Bool?) {
        switch old {
        case true?: active -= 1
        case false?: passivated -= 1
        case nil: break
        }
        switch new {
        case true?: active += 1
        case false?: passivated += 1
        case nil: break
        }
    }
}
