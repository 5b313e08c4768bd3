import Testing
@testable import WorkflowRemote

/// What the placement table leaves out, given the types workers announce, is said once each:
/// a rule matching no announced type (a typo) and an announced type no rule places.
struct PlacementCoverageTests {
    static let table = PlacementTable(rules: [
        .init(pattern: "TeamBoard.VoteCounter", placement: .pool("votes")),
        .init(pattern: "TeamBoard.Board*", placement: .worker("w1")),
    ])

    @Test("a rule matching no announced type is reported once all listed workers joined; an unplaced type at once, once")
    func gapsOnceEach() {
        var coverage = PlacementCoverage(table: Self.table, listedWorkers: ["w1", "w2"])
        let first = coverage.workerJoined("w1", announcing: ["TeamBoard.BoardWorkflow", "TeamBoard.VoteCounterWorkflow"])
        #expect(first == [.typesUnplaced(types: ["TeamBoard.VoteCounterWorkflow"], worker: "w1")])
        let second = coverage.workerJoined("w2", announcing: ["TeamBoard.VoteCounterWorkflow"])
        #expect(second == [
            .ruleMatchesNothing(index: 0, pattern: "TeamBoard.VoteCounter", announced: ["TeamBoard.BoardWorkflow", "TeamBoard.VoteCounterWorkflow"])
        ])
        #expect(coverage.workerJoined("w2", announcing: ["TeamBoard.VoteCounterWorkflow"]).isEmpty)
        #expect(coverage.placementGraceEnded().isEmpty)
    }

    @Test("with workers still to come, rules are judged when the placement grace ends, not before and not without any worker")
    func rulesWaitForTheGrace() {
        var coverage = PlacementCoverage(table: Self.table, listedWorkers: ["w1", "w2"])
        #expect(coverage.placementGraceEnded().isEmpty)
        let joined = coverage.workerJoined("w1", announcing: ["TeamBoard.BoardWorkflow"])
        #expect(joined == [.ruleMatchesNothing(index: 0, pattern: "TeamBoard.VoteCounter", announced: ["TeamBoard.BoardWorkflow"])])
    }

    @Test("a table with a node-path rule leaves no type out; an empty table judges nothing")
    func pathRulesAndEmptyTables() {
        var paths = PlacementCoverage(
            table: PlacementTable(rules: [.init(pattern: "/Root/*", placement: .anyWorker)]), listedWorkers: ["w1"])
        #expect(paths.workerJoined("w1", announcing: ["Any.Type"]).isEmpty)
        var empty = PlacementCoverage(table: PlacementTable(), listedWorkers: ["w1"])
        #expect(empty.workerJoined("w1", announcing: ["Any.Type"]).isEmpty)
    }
}
