import Testing
import Workflow

// The host's contract: a rendering from init, props updates, conflated renderings, lossless
// outputs, options, observers, tree description and teardown.

@Suite struct HostTests {
    let counterPath = rootPath(CounterWorkflow.self)

    @Test func renderingIsAvailableRightAfterInit() async {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: CounterWorkflow(label: "ready"), observers: [observer])
        #expect(host.rendering.label == "ready")
        #expect(host.rendering.count == 0)
        #expect(observer.renderCount(of: counterPath) == 1)
        await host.stop()
    }

    @Test func updateReRendersWithNewPropsAndKeepsState() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "a"))
        host.rendering.onAdd.send(4)
        try await rendering(of: host) { $0.count == 4 }
        host.update(workflow: CounterWorkflow(label: "b"))
        let screen = try await rendering(of: host) { $0.label == "b" }
        #expect(screen.count == 4)
        #expect(screen.previousLabel == "a")
        #expect(screen.propsChanges == 1)
        await host.stop()
    }

    @Test func renderingsAreConflatedForASlowReader() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow())
        var slow = host.renderings.makeAsyncIterator()
        #expect(await slow.next()?.count == 0, "starts with the current rendering")

        let sink = host.rendering.onIncrement
        for _ in 1...100 { sink.send(()) }
        try await rendering(of: host) { $0.count == 100 }
        // 100 renderings were published while the slow reader was not reading: it gets the latest.
        #expect(await slow.next()?.count == 100)
        await host.stop()
        #expect(await slow.next() == nil, "finishes when the host stops")
    }

    @Test func outputsAreNotConflated() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(reportEvery: 1))
        let outputs = host.outputs
        let sink = host.rendering.onIncrement
        for _ in 1...200 { sink.send(()) }
        try await rendering(of: host) { $0.count == 200 }
        // Read only once all 200 were produced: none was dropped or reordered.
        #expect(try await next(200, from: outputs) == Array(1...200))
        await host.stop()
    }

    @Test func stopFinishesStreamsAndLaterSubscriptions() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow())
        let outputs = host.outputs
        await host.stop()
        var outputIterator = outputs.makeAsyncIterator()
        #expect(await outputIterator.next() == nil)
        var late = host.renderings.makeAsyncIterator()
        #expect(await late.next()?.count == 0, "a late subscriber still gets the last rendering")
        #expect(await late.next() == nil)
    }

    @Test(arguments: [false, true])
    func renderOnlyIfStateChangedSkipsRendersButKeepsOutputs(renderOnlyIfStateChanged: Bool) async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(
            workflow: CounterWorkflow(reportEvery: 1),
            options: RuntimeOptions(renderOnlyIfStateChanged: renderOnlyIfStateChanged),
            observers: [observer])
        let outputs = host.outputs
        let onAdd = host.rendering.onAdd
        for _ in 1...3 { onAdd.send(0) }  // state unchanged, but reports the count
        onAdd.send(1)
        #expect(try await next(4, from: outputs) == [0, 0, 0, 1], "outputs are emitted either way")
        try await rendering(of: host) { $0.count == 1 }
        _ = await host.treeDescription()  // loop barrier

        let expectedRenders = renderOnlyIfStateChanged ? 1 + 1 : 1 + 4
        #expect(observer.renderCount(of: counterPath) == expectedRenders)
        await host.stop()
    }

    @Test(arguments: [false, true])
    func conflationAppliesAQueuedBurstWithOneRender(conflate: Bool) async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(
            workflow: CounterWorkflow(), options: RuntimeOptions(conflateStaleRenderings: conflate),
            observers: [observer])
        let sink = host.rendering.onIncrement
        // Hold the loop so the whole burst is queued before the host drains any of it.
        let gate = LoopGate(closing: host.loop)
        for _ in 1...100 { sink.send(()) }
        gate.open()
        try await rendering(of: host) { $0.count == 100 }
        _ = await host.treeDescription()  // loop barrier

        let burstRenders = observer.renderCount(of: counterPath) - 1
        if conflate {
            #expect(burstRenders <= 1)
            #expect(burstRenders >= 1, "the burst is still rendered")
        } else {
            #expect(burstRenders == 100, "one render per event by default")
        }
        await host.stop()
    }

    @Test func observerSeesSessionRendersAndActions() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: CascadeRootWorkflow(), observers: [observer])
        host.rendering.middle.leaf.onAdd.send(2)
        try await rendering(of: host) { $0.reports.count == 1 }
        await host.stop()

        let events = observer.events
        let leaf = childPath(
            CounterWorkflow.self, key: "leaf",
            under: childPath(CascadeMiddleWorkflow.self, key: "middle", under: rootPath(CascadeRootWorkflow.self)))
        #expect(events.first == .sessionBegan(root: CascadeRootWorkflow.workflowTypeName))
        #expect(events.last == .sessionEnded)
        #expect(events.filter { $0 == .sessionBegan(root: CascadeRootWorkflow.workflowTypeName) }.count == 1)
        #expect(events.filter { $0 == .sessionEnded }.count == 1)
        #expect(events.contains(.actionApplied(action: "Action", path: leaf, producedOutput: true)))
        #expect(observer.renderCount(of: leaf) == 2)
        #expect(observer.renderCount(of: rootPath(CascadeRootWorkflow.self)) == 2)
    }

    @Test func treeDescriptionListsTypesAndKeys() async {
        let host = WorkflowHost(workflow: CascadeRootWorkflow())
        let description = await host.treeDescription()
        #expect(description == """
            \(CascadeRootWorkflow.workflowTypeName)
              \(CascadeMiddleWorkflow.workflowTypeName) key="middle"
                \(CounterWorkflow.workflowTypeName) key="leaf"
            """)
        await host.stop()
        #expect(await host.treeDescription() == "", "a stopped host has no tree")
    }
}
