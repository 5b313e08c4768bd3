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
func describeChild(_ type: Any.Type, key: String) -> String {
    "of type \(String(reflecting: type)) with key \"\(key)\""
}

/// Quotes a string key and leaves other keys as they print, for messages.
func describeKey(_ key: AnyHashable) -> String {
    (key.base as? String).map { "\"\($0)\"" } ?? "\(key)"
}
