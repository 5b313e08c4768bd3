import Synchronization
import Testing
import Workflow

/// `WorkflowObserver.renderingWasPublished(after:)`: one call per published rendering, with the
/// time since its render pass began (what the coordinator's `workflow_render_seconds` records).
@Suite("Publication timing")
struct PublicationTimingTests {
    final class PublicationObserver: WorkflowObserver {
        let durations = Mutex<[Duration]>([])
        func renderingWasPublished(after duration: Duration) { durations.withLock { $0.append(duration) } }
    }

    @Test("each published rendering is reported once, with a non-negative duration")
    func reportedPerPublication() async throws {
        let observer = PublicationObserver()
        let host = WorkflowHost(workflow: CounterWorkflow(), observers: [observer])
        let first = observer.durations.withLock { $0.count }
        #expect(first == 1, "the first rendering is published before init returns")
        host.rendering.onIncrement.send(())
        try await rendering(of: host) { $0.count == 1 }
        host.rendering.onIncrement.send(())
        try await rendering(of: host) { $0.count == 2 }
        await host.stop()
        let durations = observer.durations.withLock { $0 }
        #expect(durations.count == 3, "\(durations)")
        #expect(durations.allSatisfy { $0 >= .zero })
    }
}
