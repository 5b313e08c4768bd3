import Synchronization
import Testing
import Workflow

/// Records workflow-swift's observer callbacks, as an observer written for it would.
final class SessionRecorder: WorkflowObserver {
    enum Event: Equatable, Sendable {
        case began(type: String, key: String, parentType: String?)
        case ended(type: String, key: String)
        case initialState(type: String)
        case willRender(type: String)
        case didRender(type: String)
        case changed(type: String)
        case received(action: String)
        case willApply(action: String)
        case didApply(type: String, producedOutput: Bool)
    }

    private let recorded = Mutex<[Event]>([])
    var events: [Event] { recorded.withLock { $0 } }
    private func record(_ event: Event) { recorded.withLock { $0.append(event) } }

    func sessionDidBegin(_ session: WorkflowSession) {
        record(.began(
            type: "\(session.workflowType)", key: session.renderKey, parentType: session.parent.map { "\($0.workflowType)" }))
    }

    func sessionDidEnd(_ session: WorkflowSession) {
        record(.ended(type: "\(session.workflowType)", key: session.renderKey))
    }

    func workflowDidMakeInitialState<WorkflowType: Workflow>(
        _ workflow: WorkflowType, initialState: WorkflowType.State, session: WorkflowSession
    ) {
        record(.initialState(type: "\(WorkflowType.self)"))
    }

    func workflowWillRender<WorkflowType: Workflow>(
        _ workflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession
    ) -> ((WorkflowType.Rendering) -> Void)? {
        record(.willRender(type: "\(WorkflowType.self)"))
        return { [self] _ in record(.didRender(type: "\(WorkflowType.self)")) }
    }

    func workflowDidChange<WorkflowType: Workflow>(
        from oldWorkflow: WorkflowType, to newWorkflow: WorkflowType, state: WorkflowType.State, session: WorkflowSession
    ) {
        record(.changed(type: "\(WorkflowType.self)"))
    }

    func workflowDidReceiveAction<Action: WorkflowAction>(_ action: Action, workflow: Action.WorkflowType, session: WorkflowSession) {
        record(.received(action: "\(Action.WorkflowType.self)"))
    }

    func workflowWillApplyAction<Action: WorkflowAction>(
        _ action: Action, workflow: Action.WorkflowType, state: Action.WorkflowType.State, session: WorkflowSession
    ) -> ((Action.WorkflowType.State, Action.WorkflowType.Output?) -> Void)? {
        record(.willApply(action: "\(Action.WorkflowType.self)"))
        return { [self] _, output in record(.didApply(type: "\(Action.WorkflowType.self)", producedOutput: output != nil)) }
    }
}

/// Renders a `NumberChild` while `showsChild`; a child's number bumps the parent's count.
struct ObservedParent: Workflow, Sendable {
    var showsChild: Bool
    typealias State = Int
    func makeInitialState() -> Int { 0 }
    func render(state: Int, context: RenderContext<ObservedParent>) -> Sink<Int>? {
        guard showsChild else { return nil }
        return NumberChild().rendered(in: context, key: "n") { (count: inout Int, number: Int) -> Never? in
            count += number
            return nil
        }
    }
}

@Suite struct WorkflowSwiftObserverTests {
    @Test func anObserverWrittenForWorkflowSwiftSeesSessionsRendersChangesAndActions() async throws {
        let recorder = SessionRecorder()
        let host = WorkflowHost(workflow: ObservedParent(showsChild: true), observers: [recorder])
        let parent = "ObservedParent", child = "NumberChild"
        #expect(recorder.events == [
            .began(type: parent, key: "", parentType: nil), .initialState(type: parent),
            .willRender(type: parent),
            .began(type: child, key: "n", parentType: parent), .initialState(type: child),
            .willRender(type: child), .didRender(type: child),
            .didRender(type: parent),
        ])
        let before = recorder.events.count
        try #require(host.rendering).send(2)
        try await rendering(of: host) { $0 != nil }
        host.update(workflow: ObservedParent(showsChild: false))
        try await rendering(of: host) { $0 == nil }
        let later = Array(recorder.events.dropFirst(before))
        #expect(later.starts(with: [
            .received(action: child), .willApply(action: child), .didApply(type: child, producedOutput: true),
            .received(action: parent), .willApply(action: parent), .didApply(type: parent, producedOutput: false),
            .willRender(type: parent), .changed(type: child), .willRender(type: child), .didRender(type: child),
            .didRender(type: parent),
        ]), "\(later)")
        #expect(later.contains(.changed(type: parent)))
        #expect(later.last == .didRender(type: parent))
        #expect(later.contains(.ended(type: child, key: "n")))
        await host.stop()
        #expect(recorder.events.last == .ended(type: parent, key: ""))
    }
}

/// Keeps what a `WorkflowDebugger` is told.
final class RecordingDebugger: WorkflowDebugger {
    enum Report: Equatable, Sendable {
        case initial(WorkflowHierarchyDebugSnapshot)
        case update(WorkflowHierarchyDebugSnapshot, WorkflowUpdateDebugInfo)
    }

    private let recorded = Mutex<[Report]>([])
    var reports: [Report] { recorded.withLock { $0 } }

    func didEnterInitialState(snapshot: WorkflowHierarchyDebugSnapshot) {
        recorded.withLock { $0.append(.initial(snapshot)) }
    }

    func didUpdate(snapshot: WorkflowHierarchyDebugSnapshot, updateInfo: WorkflowUpdateDebugInfo) {
        recorded.withLock { $0.append(.update(snapshot, updateInfo)) }
    }
}

@Suite struct WorkflowDebuggerTests {
    @Test func aDebuggerSeesTheTreeAfterEveryPassAndWhatLedToIt() async throws {
        let debugger = RecordingDebugger()
        let host = WorkflowHost(workflow: ObservedParent(showsChild: true), debugger: debugger)
        let initial = try #require(debugger.reports.first)
        guard case .initial(let tree) = initial else { Issue.record("first report: \(initial)"); return }
        #expect(tree.workflowType == "ObservedParent")
        #expect(tree.stateDescription == "0")
        #expect(tree.children.map(\.key) == ["n"])
        #expect(tree.children.first?.snapshot.workflowType == "NumberChild")

        try #require(host.rendering).send(2)
        try await rendering(of: host) { $0 != nil }
        host.update(workflow: ObservedParent(showsChild: false))
        try await rendering(of: host) { $0 == nil }
        _ = await host.treeDescription()  // loop barrier

        let updates = debugger.reports.dropFirst().compactMap { report -> (WorkflowHierarchyDebugSnapshot, WorkflowUpdateDebugInfo)? in
            guard case .update(let snapshot, let info) = report else { return nil }
            return (snapshot, info)
        }
        let afterOutput = try #require(updates.first { $0.0.stateDescription == "2" && !$0.0.children.isEmpty })
        #expect(afterOutput.1.workflowType == "ObservedParent")
        guard case .didUpdate(source: .subtree(let child)) = afterOutput.1.kind else {
            Issue.record("the parent's update should come from its child: \(afterOutput.1)")
            return
        }
        #expect(child.workflowType == "NumberChild")
        #expect(child.kind == .didUpdate(source: .external))
        let last = try #require(updates.last)
        #expect(last.0.children.isEmpty, "the child is gone from the tree")
        #expect(last.1.workflowType == "ObservedParent")
        #expect(last.1.kind == .didUpdate(source: .external))
        await host.stop()
    }
}
