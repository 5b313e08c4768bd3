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

    /// Glob match where `*` matches any run of characters (including none).
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
        if parts.count == 1 { return pattern == text }
        var rest = Substring(text)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for (index, part) in parts.enumerated().dropFirst() {
            if index == parts.count - 1 { return part.isEmpty || rest.hasSuffix(part) }
            guard !part.isEmpty else { continue }
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }
}
