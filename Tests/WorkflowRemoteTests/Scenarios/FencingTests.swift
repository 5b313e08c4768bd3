import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// One live copy of a child: a worker that was stopped (SIGSTOP) past the liveness window, while
/// its child moved to another worker and the events queued for it were replayed there, applies
/// none of those events when it runs again (SIGCONT). It stops its children and rejoins on a
/// fresh socket before it reads anything queued on the old one.
@Suite struct FencingTests {
    @Test func workerStoppedPastTheLivenessWindowAppliesNothingQueuedForIt() async throws {
        try await FencingScene.with("fence", outputs: 400) { scene in
            // Applied, flushed and received: the old worker is idle when it is stopped.
            for _ in 0..<100 { scene.screen.onIncrement.send(1) }
            try await eventually("the first 100 outputs") { scene.progress.count.load(ordering: .relaxed) >= 100 }
            let appliedBeforeStop = try await scene.stopOldWorker()
            #expect(appliedBeforeStop == 100)

            // These are queued for the stopped worker until it is declared dead; then they are
            // replayed on the other worker, where the child moves.
            for _ in 0..<200 { scene.screen.onIncrement.send(1) }
            try await scene.childMoved()
            try await scene.wakeOldWorker()

            for _ in 0..<100 { scene.screen.onIncrement.send(1) }
            let seen = try await withSafetyTimeout("400 outputs") { await scene.collector.value }
            #expect(seen == Array(1...400), "every output exactly once, in order")
            try await rendering(of: scene.host, "the final count") { $0.count == 400 }
            #expect(
                scene.appliedByOldWorker == appliedBeforeStop,
                "the old worker applied events after it was declared dead: \(scene.appliedByOldWorker - appliedBeforeStop) more")
        }
    }

    /// The same while the worker is busy: stopped (SIGSTOP) in the middle of a burst of 1,000
    /// events, its child moves and takes 1,000 more; woken (SIGCONT), the old worker starts none
    /// of the events it had received before the stop and not yet applied: its lease is checked
    /// before every event, not once per message or slice. The one action the stop may have
    /// caught in the middle (its lease checked, its effect not yet made) ends on waking: no check
    /// made before an action can stop an action already under way, which only a fencing token
    /// checked by the resource itself could (see ARCHITECTURE, "Fencing"). Its output is refused
    /// by the parent like any from an earlier placement. Three runs, one after the other.
    @Test(.serialized, arguments: 1...3)
    func workerStoppedInTheMiddleOfABurstAppliesNoneOfItsRestOnceWoken(run: Int) async throws {
        try await FencingScene.with("fence-burst-\(run)", outputs: 2_000) { scene in
            // A burst, and the stop while the worker is still applying it.
            for _ in 0..<1_000 { scene.screen.onIncrement.send(1) }
            try await eventually("300 outputs") { scene.progress.count.load(ordering: .relaxed) >= 300 }
            let appliedBeforeStop = try await scene.stopOldWorker()

            // The rest of the burst and 1,000 more are replayed and applied on the other worker.
            try await scene.childMoved()
            for _ in 0..<1_000 { scene.screen.onIncrement.send(1) }
            let seen = try await withSafetyTimeout("2,000 outputs") { await scene.collector.value }
            #expect(seen == Array(1...2_000), "every output exactly once, in order")

            // Woken, the old worker stops its copy and rejoins; it started nothing meanwhile.
            try await scene.wakeOldWorker()
            #expect(
                scene.appliedByOldWorker - appliedBeforeStop <= 1,
                "the woken worker applied \(scene.appliedByOldWorker - appliedBeforeStop) events after its child moved (at most the one under way)")
            try await rendering(of: scene.host, "the final count") { $0.count == 2_000 }
        }
    }

    static func lines(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }
}

/// A logging counter on a pool of two worker processes, its outputs collected: what both fencing
/// tests start from, and the steps they share.
struct FencingScene {
    let parent: RemoteRuntime
    let host: WorkflowHost<FencingRoot>
    let screen: CounterScreen
    let progress: Progress
    let collector: Task<[Int], Never>
    let names: [String]
    /// The worker the counter runs on first, and the log its actions append to.
    let old: WorkerProcess
    let oldName: String
    let oldLog: String

    /// Events the old worker has applied so far (lines of its log).
    var appliedByOldWorker: Int { FencingTests.lines(oldLog) }

    /// SIGSTOPs the old worker and returns how many events it had applied (a stopped process
    /// writes nothing more, so the count is exact).
    func stopOldWorker() async throws -> Int {
        old.suspend()
        try await eventually("the worker stopped") { old.isSuspended }
        return appliedByOldWorker
    }

    /// Waits until the parent has moved the counter to the other worker.
    func childMoved() async throws {
        let second = names.first { $0 != oldName }!
        _ = try await status(of: parent, pathSuffix: "[c]", where: { $0 == .running(worker: second) })
    }

    /// SIGCONTs the old worker and waits until it has rejoined (it stopped its copy first).
    func wakeOldWorker() async throws {
        old.resume()
        try await eventually("the old worker rejoined") { parent.workerNames == names }
    }

    /// Runs `body` with a fresh scene (`outputs`: how many outputs the collector waits for), and
    /// removes every process and file afterwards, passed or failed.
    static func with(_ name: String, outputs: Int, _ body: (FencingScene) async throws -> Void) async throws {
        let parent = try makeParent(name, requestTimeout: .seconds(30))
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("wf-fence-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: logs) }
        let names = ["\(name)-a", "\(name)-b"]
        let workers = try names.map { try WorkerProcess(name: $0, connect: parent.listenEndpoint!, pool: "fence") }
        defer {
            for worker in workers {
                worker.resume()
                worker.stop()
            }
        }
        await parent.waitForWorkers(count: 2)

        let host = WorkflowHost(workflow: FencingRoot(logDirectory: logs.path), loop: parent)
        let progress = Progress()
        let collector = progress.collect(host.outputs, upTo: outputs) { $0 }
        let screen = try await rendering(of: host, "the counter") { $0.count == 0 }
        guard case .running(let first) = try await status(of: parent, pathSuffix: "[c]", where: { if case .running = $0 { true } else { false } })
        else { return }
        let old = workers[names.firstIndex(of: first)!]
        let scene = FencingScene(
            parent: parent, host: host, screen: screen, progress: progress, collector: collector, names: names, old: old, oldName: first,
            oldLog: logs.appendingPathComponent("\(old.process.processIdentifier).log").path)
        do {
            try await body(scene)
        } catch {
            await host.stop()
            await parent.shutdown()
            throw error
        }
        await host.stop()
        await parent.shutdown()
    }
}

/// Renders one `LoggingCounterWorkflow` on the `fence` pool and passes its outputs on.
struct FencingRoot: Workflow, Sendable {
    var logDirectory: String
    typealias State = Void
    typealias Output = Int

    func render(state: Void, context: RenderContext<FencingRoot>) -> CounterScreen {
        LoggingCounterWorkflow(logDirectory: logDirectory)
            .remote(on: .pool("fence"))
            .rendered(in: context, key: "c", onOutput: { _, count in count })
    }
}

/// One live worker per name: a HELLO under the name of a worker that is alive, from another
/// runtime instance, is refused with a typed reason; the live one keeps its place and its child.
/// Once that worker is really gone, the refused one (asking again with back-off) takes the name.
@Suite struct WorkerNameTests {
    @Test func secondLiveWorkerOfTheSameNameIsRefusedUntilTheFirstIsGone() async throws {
        let parent = try makeParent("twin-parent")
        let endpoint = parent.listenEndpoint!
        let first = try makeWorker("twin", parent: endpoint)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(
            workflow: CounterBoardWorkflow(counters: [.init(key: "c", step: 1)], placement: .worker("twin")), loop: parent)
        let screen = try await rendering(of: host, "the counter on the first worker") { $0["c"]?.count == 0 }["c"]!

        let second = try makeWorker("twin", parent: endpoint)
        let refusal = try await withSafetyTimeout("the refusal") { await second.refusal() }
        #expect(refusal == .nameTaken(name: "twin"))
        #expect(!second.isWelcomed)
        // The first worker kept its place and its child: no restart, events still applied there.
        screen.onIncrement.send(1)
        try await rendering(of: host, "an event applied by the first worker") { $0["c"]?.count == 1 }
        #expect(first.isWelcomed)
        #expect(first.workerCounters.started == 1 && first.workerCounters.events == 1)
        #expect(second.workerCounters.started == 0)
        #expect(parent.workerNames == ["twin"])

        // Gone for real: the name is free, and the refused worker joins and gets the child.
        await first.shutdown()
        try await eventually("the second worker welcomed") { second.isWelcomed }
        try await rendering(of: host, "the child restarted on the second worker from its snapshot") { $0["c"]?.count == 1 }
        try await eventually("the child started there") { second.workerCounters.started == 1 }

        await host.stop()
        await second.shutdown()
        await parent.shutdown()
    }
}
