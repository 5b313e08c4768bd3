import Testing
import RemoteTestSupport
import Workflow
@testable import WorkflowRemote

/// Placement is data: a table maps type names or path globs to placements; no entry runs locally.
@Suite struct PlacementTests {
    @Test func tableMatchesTypeNamesAndGlobsInOrder() {
        let table = PlacementTable(rules: [
            .init(pattern: "App.Inbox", placement: .worker("w1")),
            .init(pattern: "*[message]", placement: .pool("panes")),
            .init(pattern: "App.*", placement: .hashed(pool: "rest")),
        ])
        #expect(table.placement(typeName: "App.Inbox", path: "/Root/Remote<App.Inbox>[inbox]") == .worker("w1"))
        #expect(table.placement(typeName: "App.Message", path: "/Root/Remote<App.Message>[message]") == .pool("panes"))
        #expect(table.placement(typeName: "App.Other", path: "/Root/x") == .hashed(pool: "rest"))
        #expect(table.placement(typeName: "Lib.Thing", path: "/Root/y") == nil)
    }

    @Test("a glob's * matches any run of bytes, none included, trying later runs when an earlier one fails")
    func globMatching() {
        let cases: [(pattern: String, text: String, matches: Bool)] = [
            ("", "", true), ("", "a", false), ("*", "", true), ("*", "/Root/x", true), ("**", "ab", true),
            ("App.Inbox", "App.Inbox", true), ("App.Inbox", "App.Inbo", false), ("App.Inbox", "App.Inboxes", false),
            ("App.*", "App.", true), ("App.*", "App", false), ("*[message]", "/R/Remote<M>[message]", true),
            ("*[message]", "/R/Remote<M>[message]/x", false), ("*ab", "aab", true), ("*ab", "aba", false),
            ("a*b*c", "aXbYbZc", true), ("a*b*c", "aXbYbZ", false), ("a*b*c", "abc", true), ("a**b", "ab", true),
            ("*[remote-*]", "/~s/Remote<C>[remote-1]", true), ("*[remote-*]", "/~s/Remote<C>[local-1]", false),
            ("*a*a*a*", "aaa", true), ("*a*a*a*", "aXa", false), ("é*", "état", true), ("*ß", "Straße", false),
        ]
        for (pattern, text, expected) in cases {
            #expect(PlacementTable.matches(pattern, text) == expected, "\(pattern) against \(text)")
        }
    }

    @Test("a rule whose placement is local keeps matching children in process, ahead of broader rules")
    func localRuleRunsInProcess() {
        let table = PlacementTable(rules: [
            .init(pattern: "*[preview]", placement: .local),
            .init(pattern: "App.*", placement: .pool("panes")),
        ])
        #expect(table.placement(typeName: "App.Message", path: "/Root/Remote<App.Message>[preview]") == nil)
        #expect(table.placement(typeName: "App.Message", path: "/Root/Remote<App.Message>[message]") == .pool("panes"))
    }

    @Test func configuredPlacementFollowsTheTableAndRunsLocallyWithoutAnEntry() async throws {
        var configuration = RemoteRuntimeConfiguration(name: "configured")
        configuration.listenEndpoint = uniqueEndpoint("configured")
        configuration.placementTable = PlacementTable(rules: [.init(pattern: "*[remote-*]", placement: .pool("counters"))])
        let parent = try RemoteRuntime(configuration: configuration)
        var workerConfiguration = RemoteRuntimeConfiguration(name: "counters-1")
        workerConfiguration.parentEndpoint = parent.listenEndpoint
        workerConfiguration.pool = "counters"
        workerConfiguration.registry = remoteTestRegistry
        let worker = try RemoteRuntime(configuration: workerConfiguration)
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "remote-a", step: 1), .init(key: "here", step: 1)], placement: .configured),
            loop: parent)
        try await rendering(of: host, "both counters") { $0["remote-a"]?.count == 0 && $0["here"]?.count == 0 }
        #expect(worker.workerCounters.started == 1, "only the child the table names went to the worker")
        #expect(parent.statuses.count == 1)
        #expect(parent.statuses.values.first == .running(worker: "counters-1"))

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }
}
