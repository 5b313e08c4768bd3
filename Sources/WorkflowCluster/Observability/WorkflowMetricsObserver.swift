import Metrics
import Workflow

/// Feeds the root host's life into swift-metrics: renders, actions, outputs and the time from a
/// render pass to its settled rendering.
///
/// The coordinator attaches one to its root's host; the metrics carry the root's name as `root`.
/// Callbacks run on the host's loop, so each is one counter or timer update.
package struct WorkflowMetricsObserver: WorkflowObserver {
    private let renders: Counter
    private let actions: Counter
    private let outputs: Counter
    private let renderTime: Timer

    /// Creates the observer's metrics in `factory` (default: the process's bootstrapped system).
    package init(root: String, factory: (any MetricsFactory)? = nil) {
        let factory = factory ?? MetricsSystem.factory
        let dimensions = [("root", root)]
        renders = Counter(label: "workflow_renders_total", dimensions: dimensions, factory: factory)
        actions = Counter(label: "workflow_actions_applied_total", dimensions: dimensions, factory: factory)
        outputs = Counter(label: "workflow_action_outputs_total", dimensions: dimensions, factory: factory)
        renderTime = Timer(label: "workflow_render_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
    }

    /// Counts one node's render.
    package func workflowDidRender(path: String) {
        renders.increment()
    }

    /// Counts an applied action, and its output if it produced one.
    package func actionWasApplied(action: String, path: String, producedOutput: Bool) {
        actions.increment()
        if producedOutput { outputs.increment() }
    }

    /// Records the time from a render pass to its settled publication.
    package func renderingWasPublished(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        renderTime.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
