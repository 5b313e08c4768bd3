import Foundation
import RemoteTestSupport
import Workflow
import WorkflowRemote
import ZeroMQ

/// The processes and runtime the remote figures share: a parent runtime and two worker processes.
final class RemoteBench {
    let parent: RemoteRuntime
    var workers: [Peer] = []

    init() async throws {
        var configuration = RemoteRuntimeConfiguration(name: "bench-parent")
        configuration.listenEndpoint = uniqueEndpoint("parent")
        configuration.requestTimeout = .seconds(60)
        configuration.logger.logLevel = .error
        parent = try RemoteRuntime(configuration: configuration)
        for index in 1...2 {
            workers.append(try Peer(["worker", parent.listenEndpoint!, "bench-\(index)"]))
        }
        await parent.waitForWorkers(count: 2)
    }

    func stop() async {
        workers.forEach { $0.kill() }
        await parent.shutdown()
    }
}

/// Runs this executable as a worker process hosting the test counters.
func runWorker(endpoint: String, name: String) throws -> Never {
    var configuration = RemoteRuntimeConfiguration(name: name)
    configuration.parentEndpoint = endpoint
    configuration.registry = remoteTestRegistry
    configuration.logger.logLevel = .error
    configuration.capacity = 100_000
    profileHeartbeat.map { configuration.heartbeatInterval = $0 }
    let runtime = try RemoteRuntime(configuration: configuration)
    // SIGTERM ends it (`Peer.terminate`, so a run under valgrind writes its profile): a process
    // spawned from a dispatch thread starts with that thread's signal mask, which blocks it.
    var terminate = sigset_t()
    sigemptyset(&terminate)
    sigaddset(&terminate, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &terminate, nil)
    // Exits once the benchmark is gone (it is reparented), so a crashed run leaves no orphans.
    // Meanwhile it answers the benchmark's requests for its allocation count (`WorkerAllocations`).
    let benchmark = getppid()
    while getppid() == benchmark {
        withExtendedLifetime(runtime) { _ = usleep(20_000) }
        WorkerAllocations.answerIfAsked()
    }
    exit(0)
}

/// A worker process's heap allocation count (when the benchmark runs with the preloaded
/// `Benchmarks/MallocCounter`, which its helper processes inherit), asked for through two files:
/// the benchmark creates `…-PID.ask`, the worker answers in `…-PID.count` and removes the question.
enum WorkerAllocations {
    private static func path(_ pid: Int32, _ suffix: String) -> String { "/tmp/wf-bench-allocs-\(pid).\(suffix)" }

    static func answerIfAsked() {
        let ask = path(getpid(), "ask")
        guard FileManager.default.fileExists(atPath: ask), let count = AllocationCounter.currentCount else { return }
        try? String(count).write(toFile: path(getpid(), "count"), atomically: true, encoding: .utf8)
        unlink(ask)
    }

    /// The worker's count now (its loop answers within about 20 ms); `nil` without the counter.
    static func count(of pid: Int32) async -> UInt? {
        guard AllocationCounter.isAvailable else { return nil }
        unlink(path(pid, "count"))
        _ = FileManager.default.createFile(atPath: path(pid, "ask"), contents: nil)
        for _ in 0..<500 {
            if !FileManager.default.fileExists(atPath: path(pid, "ask")),
                let text = try? String(contentsOfFile: path(pid, "count"), encoding: .utf8), let count = UInt(text)
            {
                unlink(path(pid, "count"))
                return count
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

/// Runs this executable as a raw ZeroMQ echo peer: every message goes straight back.
func runRawEcho(endpoint: String) throws -> Never {
    let context = try ZMQContext()
    let socket = try ZMQSocket(.dealer, context: context)
    try socket.set(.linger, 0)
    try socket.set(.receiveHighWaterMark, 0)
    try socket.connect(endpoint)
    try socket.send([[0x48]])  // "H": lets the ROUTER learn this peer's routing id
    let benchmark = getppid()
    while true {
        // Wakes once a second while idle to exit if the benchmark is gone (no orphans).
        guard let frames = try socket.receiveMultipart(.timeout(.seconds(1))) else {
            if getppid() != benchmark { exit(0) }
            continue
        }
        if frames.first == [0x43] {  // "C": count N one-way messages, then answer once
            let total = Int(String(decoding: frames[1], as: UTF8.self)) ?? 0
            var seen = 0
            while seen < total { if try socket.receiveMultipart() != nil { seen += 1 } }
            try socket.send([[0x44]])
        } else {
            try socket.send(frames)
        }
    }
}

/// Round trips of a 64-byte message to a raw ZeroMQ echo peer process, in nanoseconds.
func rawRoundTrips(iterations: Int) throws -> [Double] {
    // Raw: ROUTER here, echo peer process, 64-byte frames.
    let context = try ZMQContext()
    let router = try ZMQSocket(.router, context: context)
    try router.set(.linger, 0)
    let endpoint = uniqueEndpoint("raw")
    try router.bind(endpoint)
    let echo = try Peer(["raw-echo", endpoint])
    defer { echo.kill() }
    guard let hello = try router.receiveMultipart(.timeout(.seconds(10))), let peerID = hello.first else {
        throw BenchError("raw echo peer did not connect")
    }
    let payload = [UInt8](repeating: 7, count: 64)
    var raw: [Double] = []
    for _ in 0..<iterations {
        raw.append(try measure {
            try router.send([peerID, payload])
            _ = try router.receiveMultipart()
        })
    }
    router.close()
    return raw
}

/// The median raw round trip (`rawRoundTrips`), the baseline of figure 5 when it runs alone.
func rawRoundTrip() throws -> Double {
    median(try rawRoundTrips(iterations: 2_000))
}

/// Figure 3: remote render round trip vs a raw DEALER/ROUTER round trip over the same transport.
func roundTripFigures(_ bench: RemoteBench) async throws -> [Figure] {
    let iterations = 2_000
    let raw = try rawRoundTrips(iterations: iterations)

    // Remote: one counter on a worker process; each update changes its props (step).
    let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "rt", step: 0)], placement: .worker("bench-1")), loop: bench.parent)
    await awaitRendering(host) { $0["rt"]?.step == 0 }
    let workerPID = bench.workers[0].process.processIdentifier
    var remote: [Double] = []
    let workerBefore = await WorkerAllocations.count(of: workerPID)
    let parentAllocations = await AllocationCounter.count {
        await driving(on: bench.parent) {
            for step in 1...iterations {
                remote.append(await measure {
                    await updateAndAwait(host, CounterBoardWorkflow(counters: [.init(key: "rt", step: step)], placement: .worker("bench-1"))) {
                        $0["rt"]?.step == step
                    }
                })
            }
        }
    }
    let workerAfter = await WorkerAllocations.count(of: workerPID)
    await host.stop()
    let ratio = median(remote) / median(raw)
    var figures = [
        Figure(name: "3 remote render round trip (median)", value: median(remote), unit: "ns", baseline: median(raw), goal: "≤ 1.5× raw", met: ratio <= 1.5),
        Figure(name: "3 remote render round trip (p99)", value: percentile(remote, 0.99), unit: "ns", baseline: percentile(raw, 0.99), goal: "(report)", met: nil),
    ]
    if AllocationCounter.isAvailable {
        let parent = parentAllocations / Double(iterations)
        figures.append(Figure(name: "A allocations per round trip, parent", value: parent, unit: "allocs", baseline: nil, goal: "(report)", met: nil))
        if let workerBefore, let workerAfter {
            let worker = Double(workerAfter &- workerBefore) / Double(iterations)
            figures.append(Figure(name: "A allocations per round trip, worker", value: worker, unit: "allocs", baseline: nil, goal: "(report)", met: nil))
            figures.append(Figure(
                name: "A allocations per round trip, both", value: parent + worker, unit: "allocs", baseline: nil, goal: "≤ 40",
                met: parent + worker <= 40))
        }
    }
    return figures
}

/// Figure 3's step: new props, then the rendering that shows them. Through
/// `WorkflowHost.updateAndAwaitRendering` (the loop answers the waiting task directly), or with
/// `WF_BENCH_STREAM_WAIT=1` as before it existed: `update` and a `renderings` subscription
/// filtered for the change (to compare both waits in one binary).
func updateAndAwait<W: Workflow>(_ host: WorkflowHost<W>, _ workflow: W, until shown: @escaping @Sendable (W.Rendering) -> Bool) async {
    if !streamWait, let rendering = await host.updateAndAwaitRendering(workflow: workflow), shown(rendering) { return }
    if streamWait { host.update(workflow: workflow) }
    await awaitRendering(host, where: shown)
}

let streamWait = ProcessInfo.processInfo.environment["WF_BENCH_STREAM_WAIT"] == "1"

/// Runs figure 3's loop as a driver of a remote host would: on the runtime's loop thread, the
/// runtime being the task's executor (`RemoteRuntime` is a `TaskExecutor`), so an update starts
/// and its rendering resumes the task without a thread hand-off. With
/// `WF_BENCH_GLOBAL_EXECUTOR=1` the loop runs on the cooperative pool, as it did before the
/// runtime was an executor (to compare both in one binary).
func driving<T>(on runtime: RemoteRuntime, _ body: () async throws -> T) async rethrows -> T {
    try await withTaskExecutorPreference(globalExecutorDriver ? nil : runtime, operation: body)
}

let globalExecutorDriver = ProcessInfo.processInfo.environment["WF_BENCH_GLOBAL_EXECUTOR"] == "1"

/// The heartbeat interval of a profile's parent and worker (`WF_BENCH_HEARTBEAT_MS`, set by
/// `Benchmarks/callgrind-remote.sh`): under callgrind a pass of a thousand children takes
/// seconds, the default heartbeat (250 ms × 4) fenced the worker, and the profile counted every
/// child stopped and started again (the counts of two runs differed by half).
let profileHeartbeat = ProcessInfo.processInfo.environment["WF_BENCH_HEARTBEAT_MS"].flatMap(Int.init).map { Duration.milliseconds($0) }

/// A parent runtime for a profile mode (`profile-remote`, `profile-events`) and its one worker,
/// `bench-1`.
///
/// Without ENDPOINT it spawns the worker process itself. With ENDPOINT it listens there for a
/// worker started by someone else (`workflow-bench worker ENDPOINT bench-1`): under valgrind,
/// Foundation's `Process` cannot spawn (closing the file descriptors valgrind keeps fails with
/// EBADF), so `Benchmarks/callgrind-remote.sh` starts both processes under callgrind itself.
struct ProfileParent {
    let runtime: RemoteRuntime
    let worker: Peer?

    init(endpoint: String?) async throws {
        var configuration = RemoteRuntimeConfiguration(name: "bench-parent")
        configuration.listenEndpoint = endpoint ?? uniqueEndpoint("parent")
        configuration.requestTimeout = .seconds(600)
        configuration.logger.logLevel = .error
        profileHeartbeat.map { configuration.heartbeatInterval = $0 }
        runtime = try RemoteRuntime(configuration: configuration)
        worker = endpoint == nil ? try Peer(["worker", runtime.listenEndpoint!, "bench-1"]) : nil
        await runtime.waitForWorkers(count: 1)
    }

    /// Allocations of both processes while `body` runs, printed per unit of `count` (only with
    /// the preloaded malloc counter and a worker this process spawned).
    func printAllocations(per count: Int, of what: String, _ body: () async throws -> Void) async rethrows {
        let workerPID = worker?.process.processIdentifier
        let workerBefore = if let workerPID { await WorkerAllocations.count(of: workerPID) } else { UInt?.none }
        let parentAllocations = try await AllocationCounter.count(body)
        let workerAfter = if let workerPID { await WorkerAllocations.count(of: workerPID) } else { UInt?.none }
        if AllocationCounter.isAvailable, let workerBefore, let workerAfter {
            let perParent = parentAllocations / Double(count)
            let perWorker = Double(workerAfter &- workerBefore) / Double(count)
            print("\(what): \(count), allocations per \(what.dropLast()): parent \(perParent), worker \(perWorker), both \(perParent + perWorker)")
        }
    }

    func stop() async {
        worker?.kill()
        await runtime.shutdown()
    }
}

/// `profile-remote COUNT [ENDPOINT]`: COUNT round trips of figure 3 alone (after a warm-up),
/// against one worker (`ProfileParent`), for `Benchmarks/callgrind-remote.sh`; with the preloaded
/// malloc counter it prints both processes' allocations per round trip.
func remoteRoundTripProfile(count: Int, endpoint: String?) async throws {
    let parent = try await ProfileParent(endpoint: endpoint)
    func board(_ step: Int) -> CounterBoardWorkflow {
        CounterBoardWorkflow(counters: [.init(key: "rt", step: step)], placement: .worker("bench-1"))
    }
    let host = WorkflowHost(workflow: board(0), loop: parent.runtime)
    await awaitRendering(host) { $0["rt"]?.step == 0 }
    let warmUp = 20
    for step in 1...warmUp {
        host.update(workflow: board(step))
        await awaitRendering(host) { $0["rt"]?.step == step }
    }
    await parent.printAllocations(per: count, of: "round trips") {
        await driving(on: parent.runtime) {
            for step in (warmUp + 1)...(warmUp + count) {
                await updateAndAwait(host, board(step)) { $0["rt"]?.step == step }
            }
        }
    }
    await host.stop()
    await parent.stop()
}

/// `profile-events COUNT [ENDPOINT]`: figure 4 alone, COUNT events (after a warm-up of 2,000)
/// through a remote counter and each output back to the parent, against one worker
/// (`ProfileParent`), for `Benchmarks/callgrind-remote.sh … events`; with the preloaded malloc
/// counter it prints both processes' allocations per event.
func remoteEventsProfile(count: Int, endpoint: String?) async throws {
    let parent = try await ProfileParent(endpoint: endpoint)
    let host = WorkflowHost(
        workflow: CounterBoardWorkflow(counters: [.init(key: "tp", step: 1)], placement: .worker("bench-1")), options: .optimized,
        loop: parent.runtime)
    guard let screen = await awaitRendering(host, where: { $0["tp"]?.count == 0 })?["tp"] else { throw BenchError("no counter") }
    // Lock-step (every output of a batch of 1,000 applied before the next batch is sent), so the
    // processes batch the same way in every run, under callgrind too: with events in flight
    // while the worker works, how many events share a slice and a flush (each flush renders the
    // child and snapshots it) depends on thread timing, and the counts per event moved by half.
    var burst = EventBurst(host: host, screen: screen, window: 0)
    await burst.send(2_000)
    await parent.printAllocations(per: count, of: "events") {
        await burst.send(count)
    }
    await host.stop()
    await parent.stop()
}

/// `profile-fanout COUNT [ENDPOINT] [CHILDREN]`: figure 5's props change alone, COUNT props
/// changes of CHILDREN (default 1,000) remote counters of one board (after a start and a warm-up
/// of 5), against one worker (`ProfileParent`), for `Benchmarks/callgrind-remote.sh … fanout`;
/// with the preloaded malloc counter it prints both processes' allocations per props change.
func remoteFanOutProfile(count: Int, endpoint: String?, children: Int) async throws {
    let parent = try await ProfileParent(endpoint: endpoint)
    func board(_ step: Int) -> CounterBoardWorkflow {
        CounterBoardWorkflow(counters: (0..<children).map { .init(key: "k\($0)", step: step) }, placement: .anyWorker)
    }
    let host = WorkflowHost(workflow: board(1), loop: parent.runtime)
    await awaitRendering(host) { screens in screens.count == children && screens.values.allSatisfy { $0.step == 1 } }
    let warmUp = 5
    for step in 2...(1 + warmUp) {
        host.update(workflow: board(step))
        await awaitRendering(host) { screens in screens.values.allSatisfy { $0.step == step } }
    }
    // The boards are built before the count starts: building one is the benchmark's cost, not
    // the runtime's (1,000 keys formatted per board).
    let boards = ((2 + warmUp)...(1 + warmUp + count)).map { ($0, board($0)) }
    await parent.printAllocations(per: count, of: "props changes") {
        for (step, workflow) in boards {
            host.update(workflow: workflow)
            await awaitRendering(host) { screens in screens.values.allSatisfy { $0.step == step } }
        }
    }
    await host.stop()
    await parent.stop()
}

/// `profile-fanstart COUNT [ENDPOINT] [CHILDREN]`: figure 5's start alone, COUNT times a board of
/// CHILDREN (default 1,000) new remote counters in place of the board before (whose children
/// stop in the same pass), after one such warm-up, against one worker (`ProfileParent`), for
/// `Benchmarks/callgrind-remote.sh … fanstart`; with the preloaded malloc counter it prints both
/// processes' allocations per start.
func remoteFanStartProfile(count: Int, endpoint: String?, children: Int) async throws {
    let parent = try await ProfileParent(endpoint: endpoint)
    func board(_ round: Int) -> CounterBoardWorkflow {
        CounterBoardWorkflow(counters: (0..<children).map { .init(key: "r\(round)-\($0)", step: 1) }, placement: .anyWorker)
    }
    func shown(_ round: Int) -> @Sendable ([String: CounterScreen]) -> Bool {
        let key = "r\(round)-0"
        return { screens in screens.count == children && screens[key] != nil && screens.values.allSatisfy { $0.count == 0 } }
    }
    let host = WorkflowHost(workflow: board(0), loop: parent.runtime)
    await awaitRendering(host, where: shown(0))
    let boards = (1...count).map { ($0, board($0)) }
    await parent.printAllocations(per: count, of: "starts") {
        for (round, workflow) in boards {
            host.update(workflow: workflow)
            await awaitRendering(host, where: shown(round))
        }
    }
    await host.stop()
    await parent.stop()
}

/// Figure 4's load: events sent to a remote counter through the latest rendering's sink, in
/// batches of 1,000 with at most `window` (4,000) in flight (as a real producer would keep),
/// until the parent has applied the output of every one.
///
/// The window matters: blasting all of them at once runs into the parent's bound on outstanding
/// events (`maxOutstandingEvents`, below the send queue's high-water mark of 100,000), past which
/// a sink refuses events. The latest rendering's sink, as a screen would use: a worker's sink
/// table forgets a token 32,768 exported sinks later (one per worker render), and the first
/// rendering's sink then reaches nothing (docs/BENCHMARKS.md, "What each figure measures").
struct EventBurst {
    let host: WorkflowHost<CounterBoardWorkflow>
    let screen: CounterScreen
    private var outputs: AsyncStream<CounterBoardWorkflow.Output>.AsyncIterator
    /// Events sent so far, and the count of the last output applied (each event adds 1).
    private var sent = 0
    private var applied = 0

    /// How many events may be sent and not yet applied when the next batch is sent.
    let window: Int

    init(host: WorkflowHost<CounterBoardWorkflow>, screen: CounterScreen, window: Int = 4_000) {
        self.host = host
        self.screen = screen
        self.window = window
        outputs = host.outputs.makeAsyncIterator()
    }

    mutating func send(_ events: Int) async {
        let batch = 1_000
        let target = sent + events
        while sent < target {
            let current = host.rendering["tp"] ?? screen
            let now = min(batch, target - sent)
            for _ in 0..<now { _ = current.onIncrement.send(1) }
            sent += now
            while applied < sent - window, let output = await outputs.next() { applied = output.count }
        }
        while applied < target, let output = await outputs.next() { applied = output.count }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Figure 4: events → remote child → output → parent action, sustained, vs raw one-way messages
/// of the same size; with the CPU time and heap allocations per event in the parent and in the
/// worker (repeatable where the rate, on a shared machine, is not).
func throughputFigures(_ bench: RemoteBench) async throws -> [Figure] {
    let events = 200_000
    let host = WorkflowHost(
        workflow: CounterBoardWorkflow(counters: [.init(key: "tp", step: 1)], placement: .worker("bench-2")), options: .optimized,
        loop: bench.parent)
    guard let screen = await awaitRendering(host, where: { $0["tp"]?.count == 0 })?["tp"] else { throw BenchError("no counter") }
    var burst = EventBurst(host: host, screen: screen)
    let workerPID = bench.workers[1].process.processIdentifier
    let workerAllocationsBefore = await WorkerAllocations.count(of: workerPID)
    let (parentCPUBefore, workerCPUBefore) = (cpuTime(), cpuTime(of: workerPID))
    let parentAllocationsBefore = AllocationCounter.currentCount
    let elapsed = await measure { await burst.send(events) }
    let parentAllocations = AllocationCounter.currentCount.map { Double($0 &- (parentAllocationsBefore ?? 0)) / Double(events) }
    let (parentCPU, workerCPU) = ((cpuTime() - parentCPUBefore) / Double(events), (cpuTime(of: workerPID) - workerCPUBefore) / Double(events))
    let workerAllocations = await WorkerAllocations.count(of: workerPID)
    await host.stop()

    // Raw: the same number of one-way messages of the event's size to a counting peer.
    let context = try ZMQContext()
    let router = try ZMQSocket(.router, context: context)
    try router.set(.linger, 0)
    try router.set(.sendHighWaterMark, 0)
    let endpoint = uniqueEndpoint("oneway")
    try router.bind(endpoint)
    let peer = try Peer(["raw-echo", endpoint])
    defer { peer.kill() }
    guard let hello = try router.receiveMultipart(.timeout(.seconds(10))), let peerID = hello.first else {
        throw BenchError("raw peer did not connect")
    }
    let message = [UInt8](repeating: 1, count: 48)
    let raw = try measure {
        try router.send([peerID, [0x43], Array(String(events).utf8)])
        for _ in 0..<events { try router.send([peerID, message]) }
        _ = try router.receiveMultipart()
    }
    router.close()
    let rate = Double(events) / (elapsed / 1e9)
    var figures = [
        Figure(
            name: "4 events → remote child → parent action", value: rate, unit: "/s", baseline: Double(events) / (raw / 1e9),
            goal: "≥ 200 k/s and ≥ 1/5 raw", met: rate >= 200_000 && rate * 5 >= Double(events) / (raw / 1e9)),
        Figure(name: "4 CPU time per event, parent", value: parentCPU, unit: "ns", baseline: nil, goal: "(report)", met: nil),
        Figure(name: "4 CPU time per event, worker", value: workerCPU, unit: "ns", baseline: nil, goal: "(report)", met: nil),
    ]
    if let parentAllocations {
        figures.append(Figure(name: "4 allocations per event, parent", value: parentAllocations, unit: "allocs", baseline: nil, goal: "(report)", met: nil))
        if let workerAllocationsBefore, let workerAllocations {
            let worker = Double(workerAllocations &- workerAllocationsBefore) / Double(events)
            figures.append(Figure(name: "4 allocations per event, worker", value: worker, unit: "allocs", baseline: nil, goal: "(report)", met: nil))
        }
    }
    return figures
}

/// Figure 5: props change of N existing remote children over two workers, and N new children,
/// vs one raw round trip plus the same renders done locally.
func fanOutFigures(_ bench: RemoteBench, rawRoundTrip: Double) async throws -> [Figure] {
    var figures: [Figure] = []
    for count in [10, 100, 1_000] {
        func board(_ step: Int) -> CounterBoardWorkflow {
            CounterBoardWorkflow(counters: (0..<count).map { .init(key: "k\($0)", step: step) }, placement: .anyWorker)
        }
        let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [], placement: .anyWorker), loop: bench.parent)
        let new = await measure {
            host.update(workflow: board(1))
            await awaitRendering(host) { screens in screens.count == count && screens.values.allSatisfy { $0.step == 1 && $0.count == 0 } }
        }
        var updates: [Double] = []
        // More props changes for a profile: WF_BENCH_FANOUT_STEPS (default 5).
        let steps = ProcessInfo.processInfo.environment["WF_BENCH_FANOUT_STEPS"].flatMap { Int($0) } ?? 5
        for step in 2...(1 + max(1, steps)) {
            updates.append(await measure {
                host.update(workflow: board(step))
                await awaitRendering(host) { screens in screens.values.allSatisfy { $0.step == step } }
            })
        }
        await host.stop()
        // Baseline: the same children rendered locally, plus one raw round trip.
        let local = WorkflowHost(workflow: CounterBoardWorkflow(counters: (0..<count).map { .init(key: "k\($0)", step: 1) }, placement: .local))
        var localUpdates: [Double] = []
        for step in 2...6 {
            localUpdates.append(await measure {
                local.update(workflow: CounterBoardWorkflow(counters: (0..<count).map { .init(key: "k\($0)", step: step) }, placement: .local))
                await awaitRendering(local) { screens in screens.values.allSatisfy { $0.step == step } }
            })
        }
        await local.stop()
        let baseline = rawRoundTrip + median(localUpdates)
        let value = median(updates)
        figures.append(Figure(
            name: "5 props change of \(count) remote children", value: value, unit: "ns", baseline: baseline, goal: "≤ 3×",
            met: value / baseline <= 3))
        figures.append(Figure(name: "5 start \(count) new remote children", value: new, unit: "ns", baseline: baseline, goal: "(report)", met: nil))
    }
    return figures
}

/// Figure 7: resident bytes per idle hosted child on a worker with 10,000, and on the parent.
func memoryFigures(_ bench: RemoteBench) async throws -> [Figure] {
    let count = 10_000
    let workerPID = bench.workers[0].process.processIdentifier
    let workerBefore = residentBytes(of: workerPID)
    let parentBefore = residentBytes()
    let host = WorkflowHost(
        workflow: CounterBoardWorkflow(counters: (0..<count).map { .init(key: "m\($0)", step: 1) }, placement: .worker("bench-1")),
        options: .optimized, loop: bench.parent)
    await awaitRendering(host) { screens in screens.count == count && screens.values.allSatisfy { $0.count == 0 } }
    let workerAfter = residentBytes(of: workerPID)
    let parentAfter = residentBytes()
    await host.stop()
    return [
        Figure(name: "7 worker bytes per idle remote child", value: (workerAfter - workerBefore) / Double(count), unit: "B", baseline: nil, goal: "(report)", met: nil),
        Figure(name: "7 parent RSS bytes per remote child (noisy)", value: (parentAfter - parentBefore) / Double(count), unit: "B", baseline: nil, goal: "(report)", met: nil),
    ]
}

/// Figure 8: time from a worker's failure to its child's status turning unavailable, with the
/// default heartbeat (250 ms × 4).
///
/// Two failures, because the runtime notices them differently: SIGKILL closes the worker's end
/// of the connection, so the parent's next heartbeat send to it fails at once (ROUTER_MANDATORY)
/// and detection takes at most one heartbeat interval; SIGSTOP (a hung worker, or a partition)
/// leaves the connection up, so only the silence rule (4 intervals without a message) notices.
func failureDetectionFigure(signal: Int32, label: String) async throws -> Figure {
    var configuration = RemoteRuntimeConfiguration(name: "bench-detect-\(label)")
    configuration.listenEndpoint = uniqueEndpoint("detect-\(signal)")
    configuration.logger.logLevel = .critical
    let parent = try RemoteRuntime(configuration: configuration)
    let victim = try Peer(["worker", parent.listenEndpoint!, "victim"])
    defer { victim.kill() }
    await parent.waitForWorkers(count: 1)
    let host = WorkflowHost(workflow: CounterBoardWorkflow(counters: [.init(key: "v", step: 1)], placement: .worker("victim")), loop: parent)
    await awaitRendering(host) { $0["v"]?.count == 0 }
    let changes = parent.statusChanges
    let elapsed = await measure {
        Foundation.kill(victim.process.processIdentifier, signal)
        for await change in changes {
            if case .unavailable = change.status { break }
        }
    }
    victim.kill()
    await host.stop()
    await parent.shutdown()
    return Figure(
        name: "8 failure detection after \(label)", value: elapsed, unit: "ns", baseline: 1e9,
        goal: "≤ 1.25 s (4×250 ms + 1 poll)", met: elapsed <= 1.25e9)
}
