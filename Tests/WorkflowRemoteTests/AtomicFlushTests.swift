import Foundation
import RemoteTestSupport
import Synchronization
import Testing
@_spi(WorkflowRuntime) import Workflow
import WorkflowRemote

/// A remote child's flush is applied by its parent as one step: the outputs a worker sent and
/// the rendering after them become visible in the same render pass. A parent that counts its
/// child's outputs therefore never publishes a frame where the child's rendering and that count
/// disagree, exactly as with a local child, also through a tree of three processes.
@Suite struct AtomicFlushTests {
    static let events = 2_000

    /// The control (`.local`) and the same child on a worker process.
    @Test(arguments: [false, true])
    func parentCountingOutputsNeverPublishesATornFrame(remote: Bool) async throws {
        let parent = try makeParent(remote ? "atomic-remote" : "atomic-local")
        let worker = remote ? try WorkerProcess(name: "atomic-worker", connect: parent.listenEndpoint!) : nil
        defer { worker?.stop() }
        if remote { await parent.waitForWorkers(count: 1) }

        let frames = FrameLog<CountedScreen>()
        let host = WorkflowHost(
            workflow: OutputCountingWorkflow(counterPlacement: remote ? .worker("atomic-worker") : .local), loop: parent,
            listener: HostListener(onRendering: { frames.record($0, inStep: $0.isInStep) }, onOutput: { _ in }))
        let screen = try await rendering(of: host, "the counter") { $0.counter.count == 0 }
        for _ in 0..<Self.events { screen.counter.onIncrement.send(1) }
        try await rendering(of: host, "every event and output applied") { $0.counter.count == Self.events && $0.outputsSeen == Self.events }

        let log = frames.snapshot()
        #expect(log.tornCount == 0, "\(log.tornCount) of \(log.count) frames out of step, e.g. \(log.torn)")
        #expect(log.count > 1)
        await host.stop()
        await parent.shutdown()
    }

    /// Root (this process) → `OutputCountingWorkflow` on a middle worker process → its counter on
    /// a leaf worker process connected to the middle. The middle applies each of the leaf's
    /// flushes as one step and forwards the result as one flush of its own, so the root's frames
    /// show the leaf's count, the middle's count of its outputs and the root's count of the
    /// middle's outputs all equal.
    @Test func nestedTreeNeverPublishesATornFrame() async throws {
        let parent = try makeParent("atomic-nested")
        let middleEndpoint = uniqueEndpoint("atomic-middle")
        let middle = try WorkerProcess(name: "atomic-middle", connect: parent.listenEndpoint!, listen: middleEndpoint)
        defer { middle.stop() }
        await parent.waitForWorkers(count: 1)
        let leaf = try WorkerProcess(name: "atomic-leaf", connect: middleEndpoint)
        defer { leaf.stop() }

        let frames = FrameLog<NestedCountingRoot.Screen>()
        let host = WorkflowHost(
            workflow: NestedCountingRoot(), loop: parent,
            listener: HostListener(onRendering: { frames.record($0, inStep: $0.isInStep) }, onOutput: { _ in }))
        let screen = try await rendering(of: host, "the leaf's counter") { $0.middle.counter.count == 0 }
        for _ in 0..<Self.events { screen.middle.counter.onIncrement.send(1) }
        try await rendering(of: host, "every event and output applied at both levels") {
            $0.middle.counter.count == Self.events && $0.rootSeen == Self.events
        }

        let log = frames.snapshot()
        #expect(log.tornCount == 0, "\(log.tornCount) of \(log.count) frames out of step, e.g. \(log.torn)")
        await host.stop()
        await parent.shutdown()
    }
}

/// The root of the three-process test: counts the outputs of an `OutputCountingWorkflow` that
/// runs on the middle worker.
struct NestedCountingRoot: Workflow, Sendable {
    /// Where the middle runs (`DrainTests` uses a pool of middles).
    var middlePlacement: RemotePlacement = .worker("atomic-middle")

    typealias State = Int

    struct Screen: Sendable {
        var middle: CountedScreen
        var rootSeen: Int
        var isInStep: Bool {
            // The leaf's placeholder (count -1): the middle rendered before the leaf worker took
            // the counter, so nothing can have been applied at any level yet.
            if middle.counter.count == -1 { return middle.outputsSeen <= 0 && rootSeen == 0 }
            return middle.isInStep && middle.outputsSeen == rootSeen
        }
    }

    func makeInitialState() -> Int { 0 }

    func render(state: Int, context: RenderContext<NestedCountingRoot>) -> Screen {
        let middle = OutputCountingWorkflow(counterPlacement: .anyWorker)
            .remote(on: middlePlacement)
            .rendered(in: context, key: "middle", onOutput: { state, _ in
                state += 1
                return nil
            })
        return Screen(middle: middle, rootSeen: state)
    }
}

/// Every frame a host published, as its listener saw it (synchronously, on the loop: no frame
/// is skipped, unlike the conflated `renderings` stream).
final class FrameLog<Frame: Sendable>: Sendable {
    struct Log: Sendable {
        var count = 0
        var tornCount = 0
        /// The first torn frames, as examples.
        var torn: [Frame] = []
    }

    private let log = Mutex(Log())

    func record(_ frame: Frame, inStep: Bool) {
        log.withLock { log in
            log.count += 1
            guard !inStep else { return }
            log.tornCount += 1
            if log.torn.count < 3 { log.torn.append(frame) }
        }
    }

    func snapshot() -> Log { log.withLock { $0 } }
}
