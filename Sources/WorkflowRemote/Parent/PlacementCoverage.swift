/// What the placement table leaves out, given the types workers announce: a rule that matches
/// no announced type (a typo in `match` runs the child in the parent, silently) and an announced
/// type no rule places. Each is reported once, for the parent to warn of.
///
/// Only rules matching type names are judged: a rule over node paths (`/Root/*`) may place any
/// type, so while the table has one, no announced type is said to be left out. Rules are judged
/// once every listed worker has joined, or once the start's placement grace is over with at
/// least one worker there: earlier, a rule's type may be on a worker still to come.
struct PlacementCoverage {
    /// A left-out rule or type.
    enum Gap: Equatable {
        /// `placement[index]`, matching `pattern`, matches no type a worker announced.
        case ruleMatchesNothing(index: Int, pattern: String, announced: [String])
        /// `types`, announced by `worker` (and by no worker before it), are placed by no rule:
        /// their `.configured` children run in the parent.
        case typesUnplaced(types: [String], worker: String)
    }

    private let table: PlacementTable
    private let listedWorkers: Set<String>
    private var joined: Set<String> = []
    private var announced: Set<String> = []
    private var reportedTypes: Set<String> = []
    private var rulesJudged = false
    private var graceIsOver = false

    /// Coverage of `table`, whose workers are expected to be `listedWorkers` (the configuration's).
    init(table: PlacementTable, listedWorkers: Set<String>) {
        self.table = table
        self.listedWorkers = listedWorkers
    }

    /// Records that `worker` joined announcing `types`; returns what is newly left out.
    mutating func workerJoined(_ worker: String, announcing types: Set<String>) -> [Gap] {
        joined.insert(worker)
        announced.formUnion(types)
        var unplaced: [String] = []
        if !table.rules.isEmpty, !table.rules.contains(where: { Self.isPathRule($0.pattern) }) {
            for type in types.sorted() where !reportedTypes.contains(type) {
                guard !table.rules.contains(where: { PlacementTable.matches($0.pattern, type) }) else { continue }
                reportedTypes.insert(type)
                unplaced.append(type)
            }
        }
        return (unplaced.isEmpty ? [] : [.typesUnplaced(types: unplaced, worker: worker)]) + judgeRulesIfDue()
    }

    /// Records that the start's placement grace is over; returns what is newly left out.
    mutating func placementGraceEnded() -> [Gap] {
        graceIsOver = true
        return judgeRulesIfDue()
    }

    private mutating func judgeRulesIfDue() -> [Gap] {
        let everyoneIsHere = !listedWorkers.isEmpty && listedWorkers.isSubset(of: joined)
        guard !rulesJudged, everyoneIsHere || (graceIsOver && !joined.isEmpty) else { return [] }
        rulesJudged = true
        let types = announced.sorted()
        return table.rules.enumerated().compactMap { index, rule in
            guard !Self.isPathRule(rule.pattern), !types.contains(where: { PlacementTable.matches(rule.pattern, $0) }) else { return nil }
            return .ruleMatchesNothing(index: index, pattern: rule.pattern, announced: types)
        }
    }

    /// Whether `pattern` is over node paths (they start with `/`), not type names.
    private static func isPathRule(_ pattern: String) -> Bool {
        pattern.hasPrefix("/") || pattern.hasPrefix("*/")
    }
}
