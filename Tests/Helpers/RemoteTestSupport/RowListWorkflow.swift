import Workflow
import WorkflowRemote

/// A remotable list of rows, each with a select and a delete button made by
/// `makeSink(of: Tap.self)`: deleting a row shifts the positions of the rows after it, which is
/// what tells a sink that keeps its own render pass's handler from one matched by position.
public struct RowListWorkflow: RemotableWorkflow, Equatable {
    public var rows: [String]

    public init(rows: [String]) {
        self.rows = rows
    }

    public struct State: Codable, Equatable, Sendable {
        public var rows: [String]
        public var selected: [String] = []
    }

    public func makeInitialState() -> State { State(rows: rows) }

    public func render(state: State, context: RenderContext<RowListWorkflow>) -> RowListScreen {
        RowListScreen(
            rows: state.rows.map { name in
                RowListScreen.Row(
                    name: name,
                    onSelect: context.makeSink(of: Tap.self) { _ in
                        AnyWorkflowAction<RowListWorkflow> { state, _ in
                            state.selected.append(name)
                            return nil
                        }
                    },
                    onDelete: context.makeSink(of: Tap.self) { _ in
                        AnyWorkflowAction<RowListWorkflow> { state, _ in
                            state.rows.removeAll { $0 == name }
                            return nil
                        }
                    })
            },
            selected: state.selected)
    }

    public func placeholderRendering() -> RowListScreen {
        RowListScreen(rows: [], selected: [])
    }
}

/// The list's rendering.
public struct RowListScreen: Codable, Sendable {
    public struct Row: Codable, Sendable {
        public var name: String
        public var onSelect: Sink<Tap>
        public var onDelete: Sink<Tap>
    }

    public var rows: [Row]
    public var selected: [String]
    public var names: [String] { rows.map(\.name) }
}

/// A button press: `Void` is not `Codable`, so a remote button sends this.
public struct Tap: Codable, Sendable {
    public init() {}
}
