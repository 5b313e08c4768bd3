import Workflow

/// A worker the workflow under test is expected to run, and the output the tester pretends it
/// produced.
///
/// Workers are rendered as children whose identity is the worker's type plus key; a worker
/// matches when it is of the expected type and `isEquivalent(to:)` the expected value, the same
/// test the runtime uses to decide whether a running worker may keep going.
struct ExpectedWorker {
    /// The worker type (for messages and type matching).
    let workerType: Any.Type
    /// The key the worker must be run with.
    let key: String
    /// The expected worker value, for messages.
    let workerDescription: String
    /// Whether a rendered worker (of any type) is equivalent to the expected one.
    let isEquivalent: (any Sendable) -> Bool
    /// The output to feed through the parent's output map after render, if any.
    let output: (any Sendable)?
    /// Where the expectation was declared, for the "not rendered" failure.
    let location: FailureLocation

    /// "Worker Loader(id: 1) with key """, for messages.
    var description: String { "worker \(workerDescription) with key \"\(key)\"" }
}
