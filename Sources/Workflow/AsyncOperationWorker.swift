/// A worker that runs one asynchronous function and reports its result: workflow-swift's
/// (WorkflowConcurrency's) `AsyncOperationWorker`, for the common "load this once" case without
/// declaring a worker type.
///
/// Every instance is equivalent to every other: while a workflow keeps rendering it under the
/// same key, the first operation keeps running and a new closure does not restart it. Give the
/// worker a key that changes with what it loads to start over.
public struct AsyncOperationWorker<Output: Sendable>: Worker {
    private let operation: @Sendable () async -> Output

    /// A worker that runs `operation`.
    public init(_ operation: @escaping @Sendable () async -> Output) {
        self.operation = operation
    }

    /// Runs the operation; its result is the worker's one output.
    public func run() async -> Output {
        await operation()
    }

    /// Always `true`: closures cannot be compared, so the key decides when the work is new.
    public func isEquivalent(to otherWorker: AsyncOperationWorker) -> Bool {
        true
    }
}

extension RenderContext {
    /// Runs `block` once, keyed by the call site, and applies the action it returns:
    /// workflow-swift's `context.run { … }`. Two calls on one line need distinct workers instead.
    public func run<Action: WorkflowAction & Sendable>(
        keyFile: StaticString = #fileID,
        keyFunction: StaticString = #function,
        keyLine: Int = #line,
        block: @escaping @Sendable () async -> Action
    ) where Action.WorkflowType == WorkflowType {
        AsyncOperationWorker(block)
            .running(in: self, key: "\(keyFile).\(keyFunction):\(keyLine)", outputMap: { $0 })
    }

    /// Runs `block` once, keyed by the call site, and applies the action `map` makes of its result.
    public func run<Output: Sendable, Action: WorkflowAction>(
        keyFile: StaticString = #fileID,
        keyFunction: StaticString = #function,
        keyLine: Int = #line,
        block: @escaping @Sendable () async -> Output,
        map: @escaping (Output) -> Action
    ) where Action.WorkflowType == WorkflowType {
        AsyncOperationWorker(block)
            .running(in: self, key: "\(keyFile).\(keyFunction):\(keyLine)", outputMap: map)
    }
}
