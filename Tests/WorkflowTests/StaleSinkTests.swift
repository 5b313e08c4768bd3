import Foundation
import Testing
import Workflow

// A sink keeps the closure of the render pass that made it: a tap on a screen that is no longer
// the latest acts on the row that screen showed, never on whatever row a later pass put at the
// same position (workflow-swift's rule).

/// A list of rows, each with a select and a delete button made by `makeSink(of: Void.self)`.
struct RowListWorkflow: Workflow, Sendable {
    struct State: Equatable, Sendable {
        var rows: [String]
        var selected: [String] = []
    }

    struct Row: Sendable {
        var name: String
        var onSelect: Sink<Void>
        var onDelete: Sink<Void>
    }

    struct Screen: Sendable {
        var rows: [Row]
        var selected: [String]
        var names: [String] { rows.map(\.name) }
    }

    func makeInitialState() -> State { State(rows: ["a", "b", "c"]) }

    func render(state: State, context: RenderContext<RowListWorkflow>) -> Screen {
        Screen(
            rows: state.rows.map { name in
                Row(
                    name: name,
                    onSelect: context.makeSink(of: Void.self) { _ in
                        AnyWorkflowAction<RowListWorkflow> { state, _ in
                            state.selected.append(name)
                            return nil
                        }
                    },
                    onDelete: context.makeSink(of: Void.self) { _ in
                        AnyWorkflowAction<RowListWorkflow> { state, _ in
                            state.rows.removeAll { $0 == name }
                            return nil
                        }
                    })
            },
            selected: state.selected)
    }
}

/// Renders a `RowListWorkflow` child while `showsChild`.
struct RowListParent: Workflow, Sendable {
    var showsChild: Bool
    typealias State = Void
    func render(state: Void, context: RenderContext<RowListParent>) -> RowListWorkflow.Screen? {
        showsChild ? RowListWorkflow().rendered(in: context, key: "list") : nil
    }
}

/// Stateless: its only action reports an output.
struct StatelessReporter: Workflow, Sendable {
    typealias State = Void
    typealias Output = Int
    func render(state: Void, context: RenderContext<StatelessReporter>) -> Sink<Int> {
        context.makeOutputSink()
    }
}

@Suite struct StaleSinkTests {
    @Test func aSinkFromAnEarlierRenderingAppliesItsOwnRowsAction() async throws {
        let host = WorkflowHost(workflow: RowListWorkflow())
        let shown = host.rendering
        #expect(shown.names == ["a", "b", "c"])
        shown.rows[0].onDelete.send(())
        try await rendering(of: host) { $0.names == ["b", "c"] }
        // The screen still shown is the one with a, b, c: tapping b there must select b.
        shown.rows[1].onSelect.send(())
        let selected = try await rendering(of: host) { !$0.selected.isEmpty }
        #expect(selected.selected == ["b"], "the stale row b's sink selected \(selected.selected)")
        await host.stop()
    }

    @Test func staleAndFreshSinksOfTheSameTypesDoNotOverrideEachOther() async throws {
        let host = WorkflowHost(workflow: RowListWorkflow())
        let first = host.rendering
        first.rows[0].onDelete.send(())
        let second = try await rendering(of: host) { $0.names == ["b", "c"] }
        // Interleave sinks of both renderings: each applies its own closure, against the
        // current state.
        first.rows[2].onSelect.send(())  // c
        second.rows[0].onSelect.send(())  // b
        first.rows[0].onSelect.send(())  // a, deleted meanwhile: its closure still names a
        second.rows[1].onSelect.send(())  // c
        let settled = try await rendering(of: host) { $0.selected.count == 4 }
        #expect(settled.selected == ["c", "b", "a", "c"])
        // A stale delete acts on its own row too, against today's list.
        first.rows[2].onDelete.send(())
        let deleted = try await rendering(of: host) { $0.names.count == 1 }
        #expect(deleted.names == ["b"])
        await host.stop()
    }

    @Test func sinksOfATornDownChildAreStillDropped() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(workflow: RowListParent(showsChild: true), observers: [observer])
        let stale = try #require(host.rendering)
        host.update(workflow: RowListParent(showsChild: false))
        try await rendering(of: host) { $0 == nil }
        stale.rows[1].onSelect.send(())
        stale.rows[0].onDelete.send(())
        host.update(workflow: RowListParent(showsChild: true))
        let fresh = try await rendering(of: host) { $0 != nil }
        _ = await host.treeDescription()  // loop barrier: the stale sends have been handled
        #expect(fresh?.selected == [], "a new child starts fresh; the old node's events went nowhere")
        #expect(fresh?.names == ["a", "b", "c"])
        #expect(!observer.events.contains { if case .actionApplied = $0 { true } else { false } })
        await host.stop()
    }

    @Test func aVoidStateWorkflowDoesNotRenderAgainWhenOnlyRenderingOnChange() async throws {
        let observer = RecordingObserver()
        let host = WorkflowHost(
            workflow: StatelessReporter(), options: RuntimeOptions(renderOnlyIfStateChanged: true), observers: [observer])
        let outputs = host.outputs
        for value in 1...3 { host.rendering.send(value) }
        #expect(try await next(3, from: outputs) == [1, 2, 3], "outputs are still emitted")
        _ = await host.treeDescription()  // loop barrier
        #expect(observer.renderCount(of: rootPath(StatelessReporter.self)) == 1, "only the initial render")
        await host.stop()
    }

    @Test func anInertSinkRefusesAndCodesWithoutARuntime() throws {
        let inert = Sink<Int>.inert
        #expect(inert.send(1) == false)
        let bytes = try JSONEncoder().encode([inert])
        let decoded = try JSONDecoder().decode([Sink<Int>].self, from: bytes)
        #expect(decoded.count == 1)
        #expect(decoded[0].send(2) == false, "an inert sink decodes to an inert sink")
        #expect(throws: SinkCodingError.self, "a closure sink still cannot be encoded") {
            try JSONEncoder().encode([Sink<Int> { _ in }])
        }
    }
}
