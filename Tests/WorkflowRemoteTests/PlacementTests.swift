import Testing
import RemoteTestSupport
import Workflow
import WorkflowRemote

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
