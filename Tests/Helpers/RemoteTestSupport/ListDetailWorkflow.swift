import Foundation
import Workflow
import WorkflowRemote

/// The cluster tests' root: a list pane and a detail pane, each a remote child placed by the
/// configuration (`.configured`) or as the props say.
///
/// The root owns the selection: the list reports a pick as output, and the detail pane gets the
/// picked id as props. So one event crosses every part of the library: a sink token served by
/// the coordinator, a remote sink on the list's worker, an output back to the root, and new
/// props to the detail's worker.
public struct ListDetailWorkflow: Workflow, Codable, Equatable, Sendable {
    public var ids: [Int]
    public var listPlacement: RemotePlacement
    public var detailPlacement: RemotePlacement

    public init(ids: [Int] = Array(1...5), listPlacement: RemotePlacement = .configured, detailPlacement: RemotePlacement = .configured) {
        self.ids = ids
        self.listPlacement = listPlacement
        self.detailPlacement = detailPlacement
    }

    public struct State: Codable, Equatable, Sendable {
        public var selection: Int?
    }

    public func makeInitialState() -> State { State(selection: nil) }

    public func render(state: State, context: RenderContext<ListDetailWorkflow>) -> ListDetailScreen {
        ListDetailScreen(
            list: ListPaneWorkflow(ids: ids).remote(on: listPlacement)
                .rendered(in: context, key: "list", onOutput: { state, picked in
                    state.selection = picked
                    return nil
                }),
            detail: DetailPaneWorkflow(id: state.selection).remote(on: detailPlacement).rendered(in: context, key: "detail"))
    }
}

/// Both panes.
public struct ListDetailScreen: Codable, Sendable {
    public var list: ListPaneScreen
    public var detail: DetailPaneScreen
}

/// Lists ids and reports the one picked. Stateless: the ids are its props.
public struct ListPaneWorkflow: RemotableWorkflow, Equatable {
    public var ids: [Int]

    public init(ids: [Int]) {
        self.ids = ids
    }

    public typealias State = Void
    public typealias Output = Int

    public func render(state: Void, context: RenderContext<ListPaneWorkflow>) -> ListPaneScreen {
        ListPaneScreen(ids: ids, onPick: context.makeOutputSink(), renderedBy: renderingProcess)
    }

    public func placeholderRendering() -> ListPaneScreen {
        ListPaneScreen(ids: [], onPick: .inert, renderedBy: unavailableProcess)
    }
}

/// The list pane.
public struct ListPaneScreen: Codable, Sendable {
    public var ids: [Int]
    /// Picks an id: the list reports it to its parent.
    public var onPick: Sink<Int>
    /// The process that rendered the pane (`unavailableProcess` on a placeholder).
    public var renderedBy: String
}

/// Shows the picked id. Stateless, emits nothing.
public struct DetailPaneWorkflow: RemotableWorkflow, Equatable {
    public var id: Int?

    public init(id: Int?) {
        self.id = id
    }

    public typealias State = Void

    public func render(state: Void, context: RenderContext<DetailPaneWorkflow>) -> DetailPaneScreen {
        DetailPaneScreen(id: id, renderedBy: renderingProcess)
    }

    public func placeholderRendering() -> DetailPaneScreen {
        DetailPaneScreen(id: id, renderedBy: unavailableProcess)
    }
}

/// The detail pane.
public struct DetailPaneScreen: Codable, Sendable, Equatable {
    public var id: Int?
    /// The process that rendered the pane (`unavailableProcess` on a placeholder).
    public var renderedBy: String
}

/// What a placeholder pane shows as its process.
public let unavailableProcess = "(unavailable)"

/// The label the cluster daemons give their process (`WORKFLOW_PROCESS_LABEL`), else the pid.
var renderingProcess: String {
    getenv("WORKFLOW_PROCESS_LABEL").map { String(cString: $0) } ?? "pid \(getpid())"
}
