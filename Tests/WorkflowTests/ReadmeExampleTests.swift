import Testing

// The README's quick-start example, compiled and run as a test so it cannot rot. The text between
// the markers is copied into README.md verbatim.

// README-EXAMPLE-BEGIN
import Workflow

/// Counts taps. State is the count; the rendering carries a sink to tap with.
struct TapCounter: Workflow, Sendable {
    struct Screen: Sendable {
        var count: Int
        var onTap: Sink<Void>
    }

    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<TapCounter>) -> Screen {
        let onTap = context.makeSink(of: Void.self) { _ in
            AnyWorkflowAction<TapCounter> { count, _ in
                count += 1
                return nil
            }
        }
        return Screen(count: state, onTap: onTap)
    }
}

/// Runs the counter, taps twice (sinks may be called from any task) and returns the new count.
func tapTwice() async -> Int {
    let host = WorkflowHost(workflow: TapCounter())  // renders once before returning
    host.rendering.onTap.send(())
    host.rendering.onTap.send(())
    var latest = host.rendering
    for await screen in host.renderings where screen.count == 2 {
        latest = screen
        break
    }
    await host.stop()
    return latest.count
}
// README-EXAMPLE-END

@Suite struct ReadmeExampleTests {
    @Test func readmeExampleCountsTaps() async throws {
        #expect(try await withSafetyTimeout("README example") { await tapTwice() } == 2)
    }
}
