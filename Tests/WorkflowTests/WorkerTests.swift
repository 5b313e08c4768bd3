import Testing
import Workflow

// A worker runs while rendered: an equivalent worker keeps its task, a non-equivalent one
// replaces it, and one no longer rendered is cancelled. Its results arrive as parent actions.

enum WorkerEvent: Sendable, Hashable {
    case started(Int), cancelled(Int)
}

/// Runs until cancelled. Workers with the same `id` are equivalent.
struct IdentifiedWorker: Worker {
    typealias Output = Int
    let id: Int
    let probe: Probe<WorkerEvent>

    func run() async -> Int {
        let (parked, release) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            probe.record(.started(id))
            for await _ in parked {}
        } onCancel: {
            // Runs synchronously inside `Task.cancel()` once the task is in this scope.
            probe.record(.cancelled(id))
            release.finish()
        }
        return id
    }

    func isEquivalent(to otherWorker: IdentifiedWorker) -> Bool { id == otherWorker.id }
}

/// Returns its value at once.
struct EchoWorker: Worker, Equatable {
    typealias Output = Int
    let value: Int
    func run() async -> Int { value }
}

/// Emits the given values, in order.
struct SequenceWorker: AsyncSequenceWorker, Equatable {
    typealias Output = Int
    let values: [Int]

    func run() -> AsyncStream<Int> {
        let values = self.values
        return AsyncStream { continuation in
            for value in values { continuation.yield(value) }
            continuation.finish()
        }
    }
}

struct WorkerParentWorkflow: Workflow, Sendable {
    let probe: Probe<WorkerEvent>
    var parkedID: Int?
    var echo: Int?
    var sequence: [Int]?

    struct State: Sendable {
        var received: [Int] = []
        var bumps = 0
    }
    enum Action: WorkflowAction, Sendable {
        typealias WorkflowType = WorkerParentWorkflow
        case received(Int)
        case bump
        func apply(toState state: inout State, context: ApplyContext<WorkerParentWorkflow>) -> Never? {
            switch self {
            case .received(let value): state.received.append(value)
            case .bump: state.bumps += 1
            }
            return nil
        }
    }
    struct Screen: Sendable {
        var received: [Int]
        var bumps: Int
        var onBump: Sink<Void>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<WorkerParentWorkflow>) -> Screen {
        if let parkedID {
            IdentifiedWorker(id: parkedID, probe: probe).running(in: context, key: "parked") { Action.received($0) }
        }
        if let echo {
            EchoWorker(value: echo).running(in: context, key: "echo") { Action.received($0) }
        }
        if let sequence {
            SequenceWorker(values: sequence).running(in: context, key: "sequence") { Action.received($0) }
        }
        return Screen(
            received: state.received, bumps: state.bumps, onBump: context.makeSink(of: Action.self).contraMap { _ in .bump })
    }
}

@Suite struct WorkerTests {
    @Test func workerResultBecomesAParentAction() async throws {
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: Probe(), echo: 7))
        let screen = try await rendering(of: host) { !$0.received.isEmpty }
        #expect(screen.received == [7])
        await host.stop()
    }

    @Test func equivalentWorkerIsNotRestarted() async throws {
        let probe = Probe<WorkerEvent>()
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: probe, parkedID: 1))
        #expect(try await probe.next(1) == [.started(1)])

        for bumps in 1...10 {
            host.rendering.onBump.send(())
            try await rendering(of: host) { $0.bumps == bumps }
        }
        // A restart would have cancelled the running task during one of those passes, and the
        // cancellation handler reports synchronously from inside `Task.cancel()`.
        #expect(probe.log == [.started(1)], "ten re-renders with an equivalent worker kept the first run")
        await host.stop()
    }

    @Test func nonEquivalentWorkerIsRestarted() async throws {
        let probe = Probe<WorkerEvent>()
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: probe, parkedID: 1))
        #expect(try await probe.next(1) == [.started(1)])

        host.update(workflow: WorkerParentWorkflow(probe: probe, parkedID: 2))
        #expect(Set(try await probe.next(2)) == [.cancelled(1), .started(2)])
        await host.stop()
        #expect(try await probe.next(1) == [.cancelled(2)], "stopping the host cancels the running worker")
    }

    @Test func workerNoLongerRenderedObservesCancellation() async throws {
        let probe = Probe<WorkerEvent>()
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: probe, parkedID: 1))
        #expect(try await probe.next(1) == [.started(1)])

        host.update(workflow: WorkerParentWorkflow(probe: probe, parkedID: nil))
        #expect(try await probe.next(1) == [.cancelled(1)])
        await host.stop()
    }

    @Test func asyncSequenceWorkerEmitsEachElementInOrder() async throws {
        let values = Array(1...50)
        let host = WorkflowHost(workflow: WorkerParentWorkflow(probe: Probe(), sequence: values))
        let screen = try await rendering(of: host) { $0.received.count == values.count }
        #expect(screen.received == values)
        await host.stop()
    }
}
