import Synchronization
import Testing
import RemoteTestSupport
import Workflow
@testable import WorkflowRemote

/// A worker lost with many children makes each of their proxies ask its node to render again.
/// The first render pass answers every request; the others must not each cost a pass of the
/// whole tree (with a thousand children that was a million child renders, seconds of a busy
/// core, after every worker loss).
@Suite struct LostWorkerRenderTests {
    /// Counts published renderings.
    final class PublicationCounter: WorkflowObserver {
        let published = Mutex(0)

        func renderingWasPublished(after duration: Duration) {
            published.withLock { $0 += 1 }
        }
    }

    @Test func aLostWorkersChildrenCostOneRenderPassNotOneEach() async throws {
        let count = 300
        let parent = try makeParent("lost-many")
        let worker = try WorkerProcess(name: "lost-many-w", connect: parent.listenEndpoint!)
        await parent.waitForWorkers(count: 1)
        let board = CounterBoardWorkflow(counters: (0..<count).map { .init(key: "k\($0)", step: 1) }, placement: .anyWorker)
        let counter = PublicationCounter()
        let host = WorkflowHost(workflow: board, observers: [counter], loop: parent)
        try await rendering(of: host, "every child rendered by the worker") { screens in
            screens.count == count && screens.values.allSatisfy { $0.count == 0 }
        }
        let before = counter.published.withLock { $0 }

        worker.kill()
        // Every proxy fails at once, in one loop iteration, and each asks for a pass; the pass
        // the first request causes places none of them again (no worker is left).
        _ = try await status(of: parent, pathSuffix: "[k\(count - 1)]") {
            if case .unavailable(.noWorker) = $0 { true } else { false }
        }
        // Queued behind every refresh request: once it is answered, they were all applied.
        _ = await host.updateAndAwaitRendering(workflow: board)
        let passes = counter.published.withLock { $0 } - before

        // One pass for the refreshes (maybe two, if a pass ran between the first failures and the
        // rest) and one for the update; a pass per child would be about \(count).
        #expect(passes <= 4, "\(passes) render passes published after the loss of a worker with \(count) children")
        #expect(parent.statuses.values.allSatisfy { if case .unavailable = $0 { true } else { false } })
        await host.stop()
        await parent.shutdown()
    }
}
