import Workflow

/// A trivial root for the generic-root tests: a count, a sink to add to it, an undo sink only
/// while there is something to undo (so its token goes stale), and a closure sink (nothing can
/// route to it, as in a placeholder rendering). No selections, no remote children.
public struct TallyWorkflow: Workflow, Sendable {
    public init() {}

    public struct Undo: Codable, Sendable {}

    public struct Screen: Encodable, Sendable {
        public var count: Int
        public var add: Sink<Int>
        public var undo: Sink<Undo>?
        public var inert: Sink<Int>
    }

    public func makeInitialState() -> Int { 0 }

    public func render(state: Int, context: RenderContext<TallyWorkflow>) -> Screen {
        let add = context.makeSink(of: Int.self) { amount in
            AnyWorkflowAction<TallyWorkflow> { count, _ in
                count += amount
                return nil
            }
        }
        let undo =
            state > 0
            ? context.makeSink(of: Undo.self) { _ in
                AnyWorkflowAction<TallyWorkflow> { count, _ in
                    count -= 1
                    return nil
                }
            } : nil
        return Screen(count: state, add: add, undo: undo, inert: Sink { _ in })
    }
}

/// What the tests read of a tally's JSON rendering.
public struct TallyJSON: Decodable, Equatable, Sendable {
    public var count: Int
    public var add: String
    public var undo: String?
    public var inert: String?
}
