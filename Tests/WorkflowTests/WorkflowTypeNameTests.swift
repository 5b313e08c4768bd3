import Testing
import Workflow

/// The name a workflow type is known by in snapshots and on the wire is what
/// `String(reflecting:)` prints for it (snapshots written before it was read from the runtime's
/// cache of type names still name their nodes so).
@Suite("Workflow type names")
struct WorkflowTypeNameTests {
    struct Nested: Workflow {
        typealias Rendering = Int
        func render(state: Void, context: RenderContext<Nested>) -> Int { 0 }
    }

    struct Generic<Value: Sendable>: Workflow {
        typealias Rendering = Int
        func render(state: Void, context: RenderContext<Generic<Value>>) -> Int { 0 }
    }

    @Test("plain, nested and generic workflows are named as String(reflecting:) prints them, module-qualified")
    func namesMatchReflection() {
        #expect(CounterWorkflow.workflowTypeName == "WorkflowTests.CounterWorkflow")
        #expect(CounterWorkflow.workflowTypeName == String(reflecting: CounterWorkflow.self))
        #expect(Nested.workflowTypeName == "WorkflowTests.WorkflowTypeNameTests.Nested")
        #expect(Generic<[String: Int?]>.workflowTypeName == String(reflecting: Generic<[String: Int?]>.self))
        #expect(
            Generic<(Int, Nested)>.workflowTypeName
                == "WorkflowTests.WorkflowTypeNameTests.Generic<(Swift.Int, WorkflowTests.WorkflowTypeNameTests.Nested)>")
        #expect(AnyWorkflow<CounterScreen, Int>.workflowTypeName == String(reflecting: AnyWorkflow<CounterScreen, Int>.self))
    }

    /// Observers are told an applied action's type by the runtime's unqualified name, which must
    /// stay the text `String(describing:)` prints (what they were told before).
    @Test("an action's observed name is what String(describing:) prints for its type")
    func actionNamesMatchDescription() {
        struct Local {}
        let types: [Any.Type] = [
            CounterWorkflow.Action.self, Generic<Nested>.self, Generic<(Int, Local)>.self, Local.self, Int?.self, ((Int) -> Void).self,
            [String: Nested].self, (any Error).self,
        ]
        for type in types { #expect(_typeName(type, qualified: false) == String(describing: type)) }
    }
}
