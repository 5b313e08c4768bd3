import Workflow
import WorkflowRemote

/// A parent that renders one remote counter per entry of its props, keyed by the entry's key:
/// adding, changing and removing entries starts, updates and stops remote children.
public struct CounterBoardWorkflow: Workflow, Sendable {
    /// Key → step of each counter, rendered in this order.
    public var counters: [Entry]
    public var placement: RemotePlacement

    public struct Entry: Sendable, Equatable {
        public var key: String
        public var step: Int
        public init(key: String, step: Int) {
            self.key = key
            self.step = step
        }
    }

    public init(counters: [Entry], placement: RemotePlacement = .anyWorker) {
        self.counters = counters
        self.placement = placement
    }

    public typealias State = Void

    /// A counter's new count, with its key.
    public struct Output: Sendable, Equatable {
        public var key: String
        public var count: Int
    }

    public func render(state: Void, context: RenderContext<CounterBoardWorkflow>) -> [String: CounterScreen] {
        var screens: [String: CounterScreen] = [:]
        for entry in counters {
            let key = entry.key
            screens[key] = CounterWorkflow(step: entry.step, label: key)
                .remote(on: placement)
                .rendered(in: context, key: key, onOutput: { _, count in Output(key: key, count: count) })
        }
        return screens
    }
}
