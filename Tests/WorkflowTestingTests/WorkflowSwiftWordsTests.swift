import Synchronization
import Testing
import Workflow
import WorkflowTesting

// The testers' failures carry workflow-swift's words (its users' expected-failure tests match
// substrings of them), detected in the same situations, as many times as there; and the
// behaviours its tests rely on: every action of a render test applied, an action tester with no
// workflow, `expectWorker(_:mockingOutput:)`, an `AnyWorkflow` child expected by its type.

/// The messages of the issues `body` records, each recorded as a known issue.
func failureMessages(_ body: () -> Void) -> [String] {
    let messages = MessageLog()
    withKnownIssue {
        body()
    } matching: { issue in
        messages.append(issue.comments.map(\.rawValue).joined(separator: "\n"))
        return true
    }
    return messages.all
}

/// Collects messages from the (`@Sendable`) known-issue matcher.
final class MessageLog: Sendable {
    private let messages = Mutex<[String]>([])
    func append(_ message: String) { messages.withLock { $0.append(message) } }
    var all: [String] { messages.withLock { $0 } }
}

/// A workflow shaped like workflow-swift's own tester tests: a state picks what the pass does.
struct WordsWorkflow: Workflow {
    enum Output: Equatable {
        case string(String)
    }

    enum State: Equatable {
        case idle
        case child(key: String)
        case childTwice
        case worker(input: String)
        case sideEffect(key: String)
    }

    func makeInitialState() -> State { .idle }

    func render(state: State, context: RenderContext<WordsWorkflow>) -> WordsScreen {
        switch state {
        case .idle:
            break
        case .child(let key):
            _ = WordsChild().rendered(in: context, key: key)
        case .childTwice:
            _ = WordsChild().rendered(in: context)
            _ = WordsChild().rendered(in: context)
        case .worker(let input):
            WordsWorker(input: input).running(in: context) { output in WordsAction.send(output) }
        case .sideEffect(let key):
            context.runSideEffect(key: key) { _ in Issue.record("a tester never runs a side effect") }
        }
        let sink = context.makeSink(of: WordsAction.self)
        return WordsScreen(noop: { sink.send(.noop($0)) }, send: { sink.send(.send($0)) })
    }
}

struct WordsScreen {
    var noop: (Int) -> Void
    var send: (String) -> Void
}

enum WordsAction: WorkflowAction, Equatable {
    typealias WorkflowType = WordsWorkflow
    case noop(Int)
    case send(String)

    func apply(toState state: inout WordsWorkflow.State, context: ApplyContext<WordsWorkflow>) -> WordsWorkflow.Output? {
        switch self {
        case .noop: nil
        case .send(let text): .string(text)
        }
    }
}

struct WordsChild: Workflow {
    typealias State = Void
    func render(state: Void, context: RenderContext<WordsChild>) -> String { "child" }
}

struct WordsWorker: Worker, Equatable {
    typealias Output = String
    let input: String
    func run() async -> String { input }
}

@Suite("Testers word failures as workflow-swift does")
struct WorkflowSwiftWordsTests {
    @Test("a child expected but not rendered")
    func missingChild() {
        let messages = failureMessages {
            WordsWorkflow().renderTester().expectWorkflow(type: WordsChild.self, producingRendering: "x").render()
        }
        #expect(messages.count == 1)
        #expect(messages.first?.contains(#"Expected child workflow of type: WordsChild, key: """#) == true, "\(messages)")
    }

    @Test("a child rendered but not expected")
    func unexpectedChild() {
        let messages = failureMessages {
            WordsWorkflow().renderTester(initialState: .child(key: "k")).render()
        }
        #expect(messages.count == 1)
        #expect(messages.first?.contains(
            #"Attempted to render unexpected Workflow of type WordsChild with key "k". If this child Workflow is expected, "#
                + "please add a call to `expectWorkflow(...)` with the appropriate parameters before invoking `render()`.") == true,
            "\(messages)")
    }

    @Test("a second identical expectation is accepted; rendering the child twice is the failure")
    func childTwice() {
        let messages = failureMessages {
            WordsWorkflow()
                .renderTester(initialState: .childTwice)
                .expectWorkflow(type: WordsChild.self, producingRendering: "a")
                .expectWorkflow(type: WordsChild.self, producingRendering: "b")
                .render()
        }
        #expect(messages.count == 1, "\(messages)")
        #expect(messages.first?.contains(
            #"Multiple Workflows of type WordsChild with key "" used in the same render call. "#
                + "Use a unique key to render multiple Workflows of the same type.") == true)
    }

    @Test("side effects: expected but not declared, declared but not expected")
    func sideEffects() {
        let messages = failureMessages {
            WordsWorkflow().renderTester(initialState: .sideEffect(key: "actual")).expectSideEffect(key: "expected").render()
        }
        #expect(messages.count == 2)
        #expect(messages.contains { $0.contains(#"Unexpected side-effect with key "actual""#) })
        #expect(messages.contains { $0.contains(#"Expected side-effect with key: "expected""#) })
    }

    @Test("workers: missing, unexpected, and not equivalent as one failure naming both")
    func workers() {
        let missing = failureMessages {
            WordsWorkflow().renderTester().expectWorker(WordsWorker(input: "input")).render()
        }
        #expect(missing.count == 1)
        #expect(missing.first?.contains(#"Expected child workflow of type: WorkerWorkflow<WordsWorker>, key: """#) == true)

        let unexpected = failureMessages {
            WordsWorkflow().renderTester(initialState: .worker(input: "test")).render()
        }
        #expect(unexpected.count == 1)
        #expect(unexpected.first?.contains(#"unexpected Workflow of type WorkerWorkflow<WordsWorker> with key """#) == true)

        let different = failureMessages {
            WordsWorkflow().renderTester(initialState: .worker(input: "test")).expectWorker(WordsWorker(input: "not-test")).render()
        }
        #expect(different == different.filter { $0.contains("not equivalent") } && different.count == 1, "\(different)")
        #expect(different.first?.contains(
            #"Workers of type WordsWorker not equivalent. Expected: WordsWorker(input: "not-test"). Got: WordsWorker(input: "test")"#)
            == true)
    }

    @Test("state, output and action mismatches show workflow-swift's words and a line diff")
    func differences() {
        let result = WordsWorkflow().renderTester().render { $0.send("hello") }
        let output = failureMessages { result.assert(output: .string("nope")) }
        #expect(output == [
            """
            Output (First) does not match the expected output (Second) - Difference: …

              − WordsWorkflow.Output.string("hello")
              + WordsWorkflow.Output.string("nope")

            (First: −, Second: +)
            Reported by WordsWorkflow.
            """,
        ])
        let action = failureMessages { result.assert(action: WordsAction.noop(70)) }
        #expect(action.first?.hasPrefix(
            """
            Action (First) does not match the expected action (Second) - Difference: …

              − WordsAction.send("hello")
              + WordsAction.noop(70)

            (First: −, Second: +)
            """) == true, "\(action)")
        let state = failureMessages { result.assert(state: .sideEffect(key: "nah")) }
        #expect(state.first?.hasPrefix(
            """
            State (First) does not match the expected state (Second) - Difference: …

              − WordsWorkflow.State.idle
              + WordsWorkflow.State.sideEffect(key: "nah")
            """) == true, "\(state)")
        let modifications = failureMessages { result.assertStateModifications { $0 = .child(key: "x") } }
        #expect(modifications.first?.contains("+ WordsWorkflow.State.child(key: \"x\")") == true, "\(modifications)")
    }

    @Test("no action, no output, and a missing output")
    func noActionNoOutput() {
        let result = WordsWorkflow().renderTester().render { $0.send("hello") }
        #expect(failureMessages { result.assertNoAction() }.first?.contains(#"Expected no action, but got send("hello")"#) == true)
        #expect(failureMessages { result.assertNoOutput() }.first?.contains(#"Expected no output, but got string("hello")"#) == true)
        let idle = WordsWorkflow().renderTester().render()
        #expect(failureMessages { idle.assert(output: .string("x")) }.first?.hasPrefix("No output was produced") == true)
        #expect(failureMessages { idle.verifyOutput { _ in } }.first?.hasPrefix("No output was produced") == true)
        #expect(failureMessages { idle.assert(action: WordsAction.noop(1)) }.first?.hasPrefix("No action was produced") == true)
    }

    @Test("several actions in one render test: each applied, each extra action and output reported, the last kept")
    func severalActions() {
        var result: RenderTesterResult<WordsWorkflow>?
        let messages = failureMessages {
            result = WordsWorkflow().renderTester().render { screen in
                screen.send("first")
                screen.send("second")
            }
        }
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.contains { $0.contains("Received multiple actions in a single render test") })
        #expect(messages.contains { $0.contains("Received multiple outputs in a single render test") })
        result?.assert(action: WordsAction.send("second")).assert(output: .string("second"))
    }
}

/// A workflow with stored properties (no `init()`), whose actions may read them.
struct PropsWorkflow: Workflow {
    var prop: Int
    var optionalProp: String?
    typealias State = Int
    typealias Output = String
    func makeInitialState() -> Int { 0 }
    func render(state: Int, context: RenderContext<PropsWorkflow>) -> Int { state }

    enum Action: WorkflowAction {
        typealias WorkflowType = PropsWorkflow
        case add(Int)
        case addProp
        case readOptional

        func apply(toState state: inout Int, context: ApplyContext<PropsWorkflow>) -> String? {
            switch self {
            case .add(let amount):
                state += amount
                return nil
            case .addProp:
                state += context[workflowValue: \.prop]
                return nil
            case .readOptional:
                return context[workflowValue: \.optionalProp] ?? "absent"
            }
        }
    }
}

@Suite("Action testers and render testers in workflow-swift's shapes")
struct WorkflowSwiftShapesTests {
    @Test("tester(withState:) for a workflow with stored props applies actions that read none")
    func testerWithoutWorkflow() {
        PropsWorkflow.Action.tester(withState: 1)
            .send(action: .add(2))
            .send(action: .add(3))
            .assert(state: 6)
            .assertNoOutput()
    }

    @Test("reading a prop without a workflow fails with workflow-swift's words; an optional reads as nil")
    func readingAPropWithoutWorkflow() {
        var tester: WorkflowActionTester<PropsWorkflow, PropsWorkflow.Action>?
        let messages = failureMessages {
            tester = PropsWorkflow.Action.tester(withState: 0).send(action: .readOptional)
        }
        #expect(messages.count == 1)
        #expect(messages.first?.contains("Attempted to read value") == true && messages.first?.contains("optionalProp") == true)
        #expect(messages.first?.contains("Pass an instance of the Workflow to the ActionTester to enable this functionality") == true)
        tester?.assert(output: "absent")
        // Given a workflow, props are read.
        PropsWorkflow.Action.tester(withState: 1, workflow: PropsWorkflow(prop: 41, optionalProp: "here"))
            .send(action: .addProp)
            .assert(state: 42)
            .send(action: .readOptional)
            .assert(output: "here")
    }

    @Test("expectWorker(_:mockingOutput:key:) answers the worker's output")
    func expectWorkerMockingOutput() {
        WordsWorkflow()
            .renderTester(initialState: .worker(input: "other"))
            .expectWorker(WordsWorker(input: "other"), mockingOutput: "mocked")
            .render()
            .assert(action: WordsAction.send("mocked"))
            .assert(output: .string("mocked"))
        PropsWorkerParent()
            .renderTester()
            .expectWorker(WordsWorker(input: "keyed"), mockingOutput: nil, key: "k")
            .render()
            .assertNoAction()
    }

    @Test("an erased child rendered as a workflow is expected by its AnyWorkflow type")
    func anyWorkflowChild() {
        OpaqueParent(child: { LeafWorkflow(label: "x").asAnyWorkflow() })
            .renderTester()
            .expectWorkflowIgnoringOutput(type: AnyWorkflow<String, String>.self, producingRendering: "answered")
            .render { #expect($0 == "answered") }
            .assertNoOutput()
    }
}

/// Runs a keyed worker, for `expectWorker(_:mockingOutput:key:)`.
struct PropsWorkerParent: Workflow {
    typealias State = Void
    func render(state: Void, context: RenderContext<PropsWorkerParent>) {
        WordsWorker(input: "keyed").running(in: context, key: "k") { _ in AnyWorkflowAction<PropsWorkerParent>.noAction }
    }
}

/// Renders an erased child it is given, ignoring its output.
struct OpaqueParent: Workflow {
    typealias State = Void
    var child: () -> AnyWorkflow<String, String>
    func render(state: Void, context: RenderContext<OpaqueParent>) -> String {
        child().ignoringOutput().rendered(in: context)
    }
}
