import Foundation
import Workflow
import WorkflowRemote

/// A counter whose action has an external effect: it appends the new count to a log file of the
/// process that applies it (`<logDirectory>/<pid>.log`, one line per applied event). Outputs are
/// deduplicated across failovers, effects like this are not, so the logs show which process
/// applied which event, and whether a worker applied any after its parent declared it dead.
public struct LoggingCounterWorkflow: RemotableWorkflow, Equatable {
    public var logDirectory: String

    public init(logDirectory: String) {
        self.logDirectory = logDirectory
    }

    public typealias State = Int
    public typealias Output = Int

    public func makeInitialState() -> Int { 0 }

    public func render(state: Int, context: RenderContext<LoggingCounterWorkflow>) -> CounterScreen {
        CounterScreen(
            label: "logging", count: state, step: 1,
            onIncrement: context.makeSink(of: Int.self) { _ in
                AnyWorkflowAction<LoggingCounterWorkflow> { state, context in
                    state += 1
                    Self.append("\(state)\n", to: "\(context[workflowValue: \.logDirectory])/\(getpid()).log")
                    return state
                }
            })
    }

    public func placeholderRendering() -> CounterScreen {
        CounterScreen(label: "logging", count: -1, step: 1, onIncrement: Sink { _ in })
    }

    /// One `write` per line, so a line is in the file entirely or not at all.
    private static func append(_ line: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
