import Synchronization
import Testing
@_spi(WorkflowRuntime) import Workflow

/// A host whose listener is the only reader of its renderings (a worker's hosted child):
/// `HostListener.keepsLatestRendering == false`.
@Suite("Host listener without a latest rendering")
struct HostListenerTests {
    @Test("the listener still gets every rendering, and a stream subscribed later gets the renderings after it")
    func listenerGetsEveryRenderingAndStreamsStillWork() async throws {
        let seen = Mutex<[Int]>([])
        let firstScreen = Mutex<CounterScreen?>(nil)
        let host = WorkflowHost(
            workflow: CounterWorkflow(), loop: nil,
            listener: HostListener(
                onRendering: { screen in
                    seen.withLock { $0.append(screen.count) }
                    firstScreen.withLock { $0 = $0 ?? screen }
                },
                onOutput: { _ in }, keepsLatestRendering: false))
        #expect(seen.withLock { $0 } == [0], "the first rendering reaches the listener before init returns")
        let screen = try #require(firstScreen.withLock { $0 })
        // Subscribed after the first rendering: without a latest one kept, the stream starts with
        // the next rendering (the first one made after it subscribed).
        let stream = host.renderings
        screen.onIncrement.send(())
        let next = try await withSafetyTimeout("the rendering after the subscription") { () async throws -> Int in
            for await rendering in stream { return rendering.count }
            throw WaitFailure(description: "the stream ended")
        }
        #expect(next == 1)
        #expect(seen.withLock { $0 } == [0, 1])
        await host.stop()
    }
}
