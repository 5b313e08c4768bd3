import RemoteTestSupport
import Synchronization
import Testing
import Workflow
import WorkflowClusterTesting
import WorkflowRemote

// A worker run by a remote child is cancelled on the worker's runtime when that child stops
// there: the parent stops rendering it, or it moves to another worker. Its sequence must hear
// the cancellation (its `onCancel` runs) there too, or the worker process leaks what the
// sequence holds for as long as it lives.

/// What the sequences of remote children's workers report, by child label. The worker runtimes
/// of these tests run in this process, so the test awaits the reports directly.
final class SequenceReports: Sendable {
    enum Event: Sendable, Equatable {
        case started, cancelled
    }

    static let shared = SequenceReports()

    private let channels = Mutex<[String: (AsyncStream<Event>, AsyncStream<Event>.Continuation)]>([:])

    /// The label's channel, made by whichever side asks first (events are buffered until read).
    private func channel(_ label: String) -> (AsyncStream<Event>, AsyncStream<Event>.Continuation) {
        channels.withLock { channels in
            if let channel = channels[label] { return channel }
            let channel = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
            channels[label] = channel
            return channel
        }
    }

    func record(_ event: Event, for label: String) { channel(label).1.yield(event) }

    /// Awaits the next event reported for `label`.
    func next(for label: String) async throws -> Event {
        let stream = channel(label).0
        return try await withSafetyTimeout("waiting for a report of \(label)'s sequence") {
            for await event in stream { return event }
            throw WaitFailure(description: "reports of \(label) ended")
        }
    }
}

/// A remotable child that runs a sequence worker for as long as it lives, counting its elements;
/// the sequence yields `flowingElements` elements without pause (a cancellation meanwhile usually
/// lands between two of them), then waits until cancelled, and reports its start and its
/// `onCancel`.
struct SequenceRunningChild: RemotableWorkflow, Equatable {
    var label: String

    struct State: Codable, Equatable, Sendable {
        var elements = 0
    }

    typealias Output = Int

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<SequenceRunningChild>) -> Int {
        ReportingElementsWorker(label: label).running(in: context, key: "elements") { _ in
            AnyWorkflowAction<SequenceRunningChild> { state in
                state.elements += 1
                return nil
            }
        }
        return state.elements
    }

    func placeholderRendering() -> Int { -1 }
}

/// How many elements a remote child's sequence yields before it waits: bounded, because a worker
/// emitting without end keeps its runtime's loop busy with the child's actions for good.
let flowingElements = 200

struct ReportingElementsWorker: AsyncSequenceWorker, Equatable {
    typealias Output = Int
    let label: String

    func run() -> AsyncStream<Int> {
        let label = self.label
        SequenceReports.shared.record(.started, for: label)
        let produced = Mutex(0)
        return AsyncStream(unfolding: {
            if produced.withLock({ $0 += 1; return $0 }) <= flowingElements {
                await Task.yield()
                return 1
            }
            // Parked until cancelled (iterating a stream nobody finishes ends on cancellation).
            let (parked, _) = AsyncStream<Never>.makeStream()
            for await _ in parked {}
            return nil
        }, onCancel: { SequenceReports.shared.record(.cancelled, for: label) })
    }
}

/// Renders one `SequenceRunningChild` remotely while `label` is set.
struct SequenceParentWorkflow: Workflow, Sendable {
    var label: String?
    typealias State = Void

    func render(state: Void, context: RenderContext<SequenceParentWorkflow>) -> Int? {
        label.map { label in
            SequenceRunningChild(label: label).remote(on: .anyWorker).rendered(in: context, key: "child", onOutput: { _, _ in nil })
        }
    }
}

let sequenceTestRegistry = remoteTestRegistry.registering(SequenceRunningChild.self)

@Suite struct RemoteWorkerCancellationTests {
    @Test("a remote child that stops cancels its worker's sequence on the worker, which hears it")
    func childStops() async throws {
        let label = "stops-\(uniqueEndpoint("l").suffix(8))"
        let parent = try makeParent("sequence-stops")
        let worker = try makeWorker("sequence-stops-worker", parent: parent.listenEndpoint!, registry: sequenceTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: SequenceParentWorkflow(label: label), loop: parent)
        #expect(try await SequenceReports.shared.next(for: label) == .started)
        try await rendering(of: host, "elements flowing on the worker") { ($0 ?? 0) >= 2 }

        host.update(workflow: SequenceParentWorkflow(label: nil))
        #expect(try await SequenceReports.shared.next(for: label) == .cancelled)

        await host.stop()
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test("a remote child that moves to another worker cancels the sequence it ran on the first, which hears it")
    func childMoves() async throws {
        let label = "moves-\(uniqueEndpoint("l").suffix(8))"
        let parent = try makeParent("sequence-moves")
        let first = try makeWorker("sequence-moves-first", parent: parent.listenEndpoint!, registry: sequenceTestRegistry)
        await parent.waitForWorkers(count: 1)
        let host = WorkflowHost(workflow: SequenceParentWorkflow(label: label), loop: parent)
        #expect(try await SequenceReports.shared.next(for: label) == .started)
        try await rendering(of: host, "elements flowing on the first worker") { ($0 ?? 0) >= 2 }

        let second = try makeWorker("sequence-moves-second", parent: parent.listenEndpoint!, registry: sequenceTestRegistry)
        await parent.waitForWorkers(count: 2)
        // The first worker leaves: its child stops there and starts again on the second (a
        // rebalance may have moved it there already).
        await first.shutdown()
        _ = try await status(of: parent, pathSuffix: "[child]", where: { $0 == .running(worker: "sequence-moves-second") })
        await host.stop()
        // Every sequence the child ran (on the first worker, on the second, and on any a rebalance
        // gave it between) heard its cancellation.
        var (started, cancelled) = (1, 0)
        while started < 2 || cancelled < started {
            switch try await SequenceReports.shared.next(for: label) {
            case .started: started += 1
            case .cancelled: cancelled += 1
            }
        }
        #expect(started >= 2 && cancelled == started, "started \(started), cancelled \(cancelled)")
        await second.shutdown()
        await parent.shutdown()
    }
}
