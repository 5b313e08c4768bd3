// A workflow and its tests written the way workflow-swift's tutorial writes them (props on the
// workflow, an `Action` enum per workflow, `makeSink(of: Action.self)`, children mapped into the
// parent's actions, XCTest with `tester(withState:)` and `renderTester`). Nothing here is
// adapted to this project: the imports are the ones a workflow-swift module has, and that the
// file compiles and passes is the test.
import Workflow
import WorkflowTesting
import XCTest

// MARK: Welcome

struct WelcomeScreen {
    var name: String
    var onNameChanged: (String) -> Void
    var onLoginTapped: () -> Void
}

// GUIDE-BEGIN workflow-swift-welcome
struct WelcomeWorkflow: Workflow {
    enum Output {
        case didLogIn(name: String)
    }

    struct State: Equatable {
        var name: String
    }

    func makeInitialState() -> State {
        State(name: "")
    }

    enum Action: WorkflowAction, Equatable {
        typealias WorkflowType = WelcomeWorkflow

        case nameChanged(name: String)
        case didLogIn

        func apply(toState state: inout WelcomeWorkflow.State, context: ApplyContext<WelcomeWorkflow>) -> WelcomeWorkflow.Output? {
            switch self {
            case .nameChanged(name: let name):
                state.name = name
                return nil
            case .didLogIn:
                return .didLogIn(name: state.name)
            }
        }
    }

    func render(state: WelcomeWorkflow.State, context: RenderContext<WelcomeWorkflow>) -> WelcomeScreen {
        let sink = context.makeSink(of: Action.self)
        return WelcomeScreen(
            name: state.name,
            onNameChanged: { name in sink.send(.nameChanged(name: name)) },
            onLoginTapped: { sink.send(.didLogIn) })
    }
}
// GUIDE-END

// MARK: Todo list

struct TodoModel: Equatable {
    var title: String
    var note: String
}

struct TodoListScreen {
    var todoTitles: [String]
    var onTodoSelected: (Int) -> Void
}

struct TodoListWorkflow: Workflow {
    var name: String
    var todos: [TodoModel]

    typealias State = Void

    enum Output: Equatable {
        case selectTodo(index: Int)
        case back
    }

    enum Action: WorkflowAction {
        typealias WorkflowType = TodoListWorkflow

        case onBack
        case selectTodo(index: Int)

        func apply(toState state: inout Void, context: ApplyContext<TodoListWorkflow>) -> TodoListWorkflow.Output? {
            switch self {
            case .onBack:
                return .back
            case .selectTodo(index: let index):
                return .selectTodo(index: index)
            }
        }
    }

    func render(state: Void, context: RenderContext<TodoListWorkflow>) -> TodoListScreen {
        let sink = context.makeSink(of: Action.self)
        return TodoListScreen(
            todoTitles: todos.map(\.title),
            onTodoSelected: { index in sink.send(.selectTodo(index: index)) })
    }
}

// MARK: Todo edit

struct TodoEditScreen {
    var title: String
    var note: String
    var onTitleChanged: (String) -> Void
    var onSaveTapped: () -> Void
}

/// A workflow with stored props (the todo it starts from) and no `init()`: its actions are
/// tested with `tester(withState:)` alone, as workflow-swift's tutorial tests them.
struct TodoEditWorkflow: Workflow {
    var initialTodo: TodoModel

    struct State: Equatable {
        var todo: TodoModel
    }

    enum Output: Equatable {
        case discard
        case save(TodoModel)
    }

    func makeInitialState() -> State {
        State(todo: initialTodo)
    }

    enum Action: WorkflowAction, Equatable {
        typealias WorkflowType = TodoEditWorkflow

        case titleChanged(String)
        case noteChanged(String)
        case discardTapped
        case saveTapped

        func apply(toState state: inout TodoEditWorkflow.State, context: ApplyContext<TodoEditWorkflow>) -> TodoEditWorkflow.Output? {
            switch self {
            case .titleChanged(let title):
                state.todo.title = title
            case .noteChanged(let note):
                state.todo.note = note
            case .discardTapped:
                return .discard
            case .saveTapped:
                return .save(state.todo)
            }
            return nil
        }
    }

    func render(state: TodoEditWorkflow.State, context: RenderContext<TodoEditWorkflow>) -> TodoEditScreen {
        let sink = context.makeSink(of: Action.self)
        return TodoEditScreen(
            title: state.todo.title,
            note: state.todo.note,
            onTitleChanged: { title in sink.send(.titleChanged(title)) },
            onSaveTapped: { sink.send(.saveTapped) })
    }
}

// MARK: Root

enum RootScreen {
    case welcome(WelcomeScreen)
    case todoList(TodoListScreen)
}

struct RootWorkflow: Workflow {
    enum Output {}

    enum State: Equatable {
        case welcome
        case todo(name: String)
    }

    func makeInitialState() -> RootWorkflow.State {
        .welcome
    }

    enum Action: WorkflowAction {
        typealias WorkflowType = RootWorkflow

        case logIn(name: String)
        case logOut

        func apply(toState state: inout RootWorkflow.State, context: ApplyContext<RootWorkflow>) -> RootWorkflow.Output? {
            switch self {
            case .logIn(name: let name):
                state = .todo(name: name)
            case .logOut:
                state = .welcome
            }
            return nil
        }
    }

    func render(state: RootWorkflow.State, context: RenderContext<RootWorkflow>) -> RootScreen {
        switch state {
        case .welcome:
            let welcome = WelcomeWorkflow()
                .mapOutput { output -> Action in
                    switch output {
                    case .didLogIn(name: let name):
                        return .logIn(name: name)
                    }
                }
                .rendered(in: context)
            return .welcome(welcome)
        case .todo(name: let name):
            let list = TodoListWorkflow(name: name, todos: [TodoModel(title: "Buy milk", note: "")])
                .onOutput { state, output in
                    if output == .back { state = .welcome }
                    return nil
                }
                .rendered(in: context)
            return .todoList(list)
        }
    }
}

// MARK: Tests, as workflow-swift's tutorial writes them

final class WorkflowSwiftTutorialTests: XCTestCase {
    func testWelcomeNameChangedAction() {
        WelcomeWorkflow.Action
            .tester(withState: WelcomeWorkflow.State(name: ""))
            .send(action: .nameChanged(name: "myName"))
            .assertNoOutput()
            .verifyState { state in
                XCTAssertEqual("myName", state.name)
            }
    }

    func testWelcomeLogInAction() {
        WelcomeWorkflow.Action
            .tester(withState: WelcomeWorkflow.State(name: "Ada"))
            .send(action: .didLogIn)
            .verifyOutput { output in
                switch output {
                case .didLogIn(name: let name):
                    XCTAssertEqual("Ada", name)
                }
            }
            .assert(state: WelcomeWorkflow.State(name: "Ada"))
            .assertStateModifications { _ in }
    }

    // GUIDE-BEGIN workflow-swift-tests
    func testWelcomeRenderingSendsNameChanged() {
        WelcomeWorkflow()
            .renderTester(initialState: WelcomeWorkflow.State(name: ""))
            .render { screen in
                XCTAssertEqual("", screen.name)
                screen.onNameChanged("Grace")
            }
            .assert(action: WelcomeWorkflow.Action.nameChanged(name: "Grace"))
            .verifyAction(type: WelcomeWorkflow.Action.self) { action in
                XCTAssertEqual(action, .nameChanged(name: "Grace"))
            }
            .assertStateModifications { state in
                state.name = "Grace"
            }
            .assertNoOutput()
    }

    func testRootLogsInWhenWelcomeReportsALogIn() {
        RootWorkflow()
            .renderTester(initialState: .welcome)
            .expectWorkflow(
                type: WelcomeWorkflow.self,
                producingRendering: WelcomeScreen(name: "", onNameChanged: { _ in }, onLoginTapped: {}),
                producingOutput: .didLogIn(name: "Ada"))
            .render { rendering in
                guard case .welcome = rendering else {
                    return XCTFail("Expected the welcome screen")
                }
            }
            .verifyAction(type: RootWorkflow.Action.self) { action in
                guard case .logIn(name: "Ada") = action else {
                    return XCTFail("Expected a log-in action, got \(action)")
                }
            }
            .assert(state: .todo(name: "Ada"))
    }
    // GUIDE-END

    func testRootLogInAction() {
        RootWorkflow.Action
            .tester(withState: .welcome)
            .send(action: .logIn(name: "Ada"))
            .assertNoOutput()
            .assert(state: .todo(name: "Ada"))
            .send(action: .logOut)
            .assert(state: .welcome)
    }

    func testRootShowsTheTodoListAndGoesBack() {
        RootWorkflow()
            .renderTester(initialState: .todo(name: "Ada"))
            .expectWorkflow(
                type: TodoListWorkflow.self,
                producingRendering: TodoListScreen(todoTitles: [], onTodoSelected: { _ in }),
                producingOutput: .back,
                assertions: { list in
                    XCTAssertEqual(list.name, "Ada")
                })
            .render { _ in }
            .verifyState { state in
                XCTAssertEqual(state, .welcome)
            }
    }

    func testRootRendersTheTodoListIgnoringItsOutput() {
        RootWorkflow()
            .renderTester(initialState: .todo(name: "Ada"))
            .expectWorkflowIgnoringOutput(
                type: TodoListWorkflow.self,
                producingRendering: TodoListScreen(todoTitles: ["x"], onTodoSelected: { _ in }))
            .render { rendering in
                guard case .todoList(let list) = rendering else {
                    return XCTFail("Expected the todo list")
                }
                XCTAssertEqual(list.todoTitles, ["x"])
            }
            .assertNoAction()
            .assert(state: .todo(name: "Ada"))
    }

    func testTodoListSelectionIsReported() {
        TodoListWorkflow(name: "Ada", todos: [TodoModel(title: "Buy milk", note: "")])
            .renderTester()
            .render { screen in
                XCTAssertEqual(screen.todoTitles, ["Buy milk"])
                screen.onTodoSelected(0)
            }
            .assert(output: .selectTodo(index: 0))
            .verifyOutput { output in
                XCTAssertEqual(output, .selectTodo(index: 0))
            }
    }

    func testTodoListActionsNeedTheirWorkflowOnlyWhenTheyReadIt() {
        TodoListWorkflow.Action
            .tester(withState: (), workflow: TodoListWorkflow(name: "Ada", todos: []))
            .send(action: .onBack)
            .verifyOutput { output in
                XCTAssertEqual(output, .back)
            }
    }

    // GUIDE-BEGIN workflow-swift-todo-edit-actions
    func testTodoEditActionsChangeTheTodoWithoutAWorkflow() {
        TodoEditWorkflow.Action
            .tester(withState: TodoEditWorkflow.State(todo: TodoModel(title: "Title", note: "Note")))
            .send(action: .titleChanged("Updated"))
            .assertNoOutput()
            .assert(state: TodoEditWorkflow.State(todo: TodoModel(title: "Updated", note: "Note")))
            .send(action: .noteChanged("Updated note"))
            .send(action: .saveTapped)
            .assert(output: .save(TodoModel(title: "Updated", note: "Updated note")))
            .verifyState { state in
                XCTAssertEqual(state.todo.note, "Updated note")
            }
    }
    // GUIDE-END

    func testTodoEditDiscardReportsDiscard() {
        TodoEditWorkflow.Action
            .tester(withState: TodoEditWorkflow.State(todo: TodoModel(title: "Title", note: "Note")))
            .send(action: .discardTapped)
            .assert(output: .discard)
    }

    // MARK: Expected failures, matched by the words workflow-swift's testers use

    private var expectedFailures: [String] = []

    /// Runs `body`, in which each of `substrings` must be part of one failure; those failures
    /// are taken as expected, any other fails the test.
    private func expectingFailures(_ substrings: [String], file: StaticString = #filePath, line: UInt = #line, _ body: () -> Void) {
        expectedFailures = substrings
        body()
        let unmatched = expectedFailures
        expectedFailures = []
        for substring in unmatched {
            XCTFail("Expected a failure containing \"\(substring)\"", file: file, line: line)
        }
    }

    /// Removes the first expected substring `description` contains; whether there was one.
    private func takeExpectedFailure(_ description: String) -> Bool {
        guard let index = expectedFailures.firstIndex(where: { description.contains($0) }) else { return false }
        expectedFailures.remove(at: index)
        return true
    }

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        if !takeExpectedFailure(issue.compactDescription) { super.record(issue) }
    }
    #else
    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if !takeExpectedFailure(description) {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }
    #endif

    func testTodoEditWrongExpectationsFailWithWorkflowSwiftsWords() {
        let tester = TodoEditWorkflow.Action
            .tester(withState: TodoEditWorkflow.State(todo: TodoModel(title: "Title", note: "Note")))
            .send(action: .saveTapped)
        expectingFailures([
            "failed - State (First) does not match the expected state (Second) - Difference: …",
            #"Expected no output, but got save("#,
        ]) {
            tester
                .assert(state: TodoEditWorkflow.State(todo: TodoModel(title: "Other", note: "Note")))
                .assertNoOutput()
        }
        expectingFailures([
            "failed - Output (First) does not match the expected output (Second) - Difference: …\n\n  − TodoEditWorkflow.Output.save(",
        ]) {
            tester.assert(output: .discard)
        }
        expectingFailures(["No output was produced"]) {
            tester.send(action: .titleChanged("x")).verifyOutput { _ in XCTFail("there is no output to verify") }
        }
    }
}
