/// Where a remote child runs.
///
/// Placement is data, not code: `.configured` defers to the runtime's `PlacementTable`, which
/// daemons read from their configuration file, so moving a child needs no code change. The same
/// child code runs locally when the placement says so.
public enum RemotePlacement: Sendable, Hashable, Codable {
    /// In the parent's process, as a plain local child.
    case local
    /// On any connected worker that hosts the child's type, the least loaded first.
    case anyWorker
    /// On the worker that announced this name.
    case worker(String)
    /// On a worker of this pool (workers announce their pool), the least loaded first.
    case pool(String)
    /// On a worker of this pool chosen by a stable hash of the child's node path, so the same
    /// child lands on the same worker while the pool's membership is unchanged.
    case hashed(pool: String)
    /// Wherever the runtime's `PlacementTable` says for the child's type name; local when the
    /// table has no entry for it.
    case configured
}

/// Maps remotable workflow type names (or node-path patterns) to placements.
///
/// Rules are tried in order; the first whose pattern matches wins. A pattern is an exact type
/// name, or a glob (`*` matches any run of characters) tested against the type name and then
/// against the child's node path.
public struct PlacementTable: Sendable, Equatable, Codable {
    /// One rule of the table.
    public struct Rule: Sendable, Equatable, Codable {
        /// A type name or a glob over type names / node paths.
        public var pattern: String
        /// Where matching children run (never `.configured`).
        public var placement: RemotePlacement

        public init(pattern: String, placement: RemotePlacement) {
            self.pattern = pattern
            self.placement = placement
        }
    }

    /// The rules, in order.
    public var rules: [Rule]

    public init(rules: [Rule] = []) {
        self.rules = rules
    }

    /// The placement for a child of `typeName` at `path`, or `nil` (run locally).
    public func placement(typeName: String, path: String) -> RemotePlacement? {
        for rule in rules where Self.matches(rule.pattern, typeName) || Self.matches(rule.pattern, path) {
            // A rule may say "local" (e.g. to keep one path in process ahead of a broader
            // rule): like `.configured` there, it means no remote placement at all.
            return rule.placement == .configured || rule.placement == .local ? nil : rule.placement
        }
        return nil
    }

    /// Glob match where `*` matches any run of bytes of the UTF-8 text (including none), without
    /// allocating: asked for every child a parent places.
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let star = UInt8(ascii: "*")
        let pattern = pattern.utf8, text = text.utf8
        var p = pattern.startIndex, t = text.startIndex
        // The last `*` seen, and where in `text` its run ends so far: on a mismatch, it takes
        // one more byte and the rest of the pattern is tried again from there.
        var lastStar: String.UTF8View.Index?
        var resumeText = text.startIndex
        while t != text.endIndex {
            if p != pattern.endIndex, pattern[p] == star {
                lastStar = p
                p = pattern.index(after: p)
                resumeText = t
            } else if p != pattern.endIndex, pattern[p] == text[t] {
                p = pattern.index(after: p)
                t = text.index(after: t)
            } else if let star = lastStar {
                p = pattern.index(after: star)
                resumeText = text.index(after: resumeText)
                t = resumeText
            } else {
                return false
            }
        }
        while p != pattern.endIndex, pattern[p] == star { p = pattern.index(after: p) }
        return p == pattern.endIndex
    }
}
