import Workflow

/// A child the workflow under test is expected to render, and what the tester answers for it.
///
/// Stored type-erased so one tester can hold expectations of many child types; the values are
/// cast back when a child of the same concrete type (`workflowType`) and `key` is rendered,
/// which makes the casts sound by construction.
struct ExpectedWorkflow {
    /// The concrete child type (children are identified by type plus key).
    let workflowType: any Workflow.Type
    /// The child's key.
    let key: String
    /// The `Child.Rendering` to hand back instead of rendering the child.
    let rendering: Any
    /// The `Child.Output` to feed through the parent's output map after render, if any.
    let output: Any?
    /// Assertions on the child value (its props) the parent rendered.
    let assertions: (any Workflow) -> Void
    /// Where the expectation was declared, for the "not rendered" failure.
    let location: FailureLocation

    /// Whether a child of `type` with `key` is the one this expectation describes.
    func matches(_ type: any Workflow.Type, key: String) -> Bool {
        ObjectIdentifier(workflowType) == ObjectIdentifier(type) && self.key == key
    }

    /// "of type InboxWorkflow with key "inbox"", for messages.
    var description: String { describeChild(workflowType, key: key) }
}

/// Names a child by type and key the same way in every message ("of type T with key "k"").
func describeChild(_ type: any Workflow.Type, key: String) -> String {
    "of type \(childTypeName(type)) with key \"\(key)\""
}

/// A child type's name as workflow-swift's messages give it: `String(describing:)` (not
/// module-qualified), and a worker as the workflow it runs in, `WorkerWorkflow<LoadWorker>` (or
/// `AsyncSequenceWorkerWorkflow<…>`), since tests written for workflow-swift match those words.
func childTypeName(_ type: any Workflow.Type) -> String {
    if let worker = type as? any WorkerRendering.Type {
        return workerWorkflowName(worker.wrappedWorkerType)
    }
    return String(describing: type)
}

/// `WorkerWorkflow<W>` for a `Worker`, `AsyncSequenceWorkerWorkflow<W>` for an
/// `AsyncSequenceWorker`: the names workflow-swift's runtime gives the workflow a worker runs in.
func workerWorkflowName(_ workerType: Any.Type) -> String {
    let kind = workerType is any AsyncSequenceWorker.Type ? "AsyncSequenceWorkerWorkflow" : "WorkerWorkflow"
    return "\(kind)<\(String(describing: workerType))>"
}

/// Quotes a string key and leaves other keys as they print, for messages.
func describeKey(_ key: AnyHashable) -> String {
    (key.base as? String).map { "\"\($0)\"" } ?? "\(key)"
}
